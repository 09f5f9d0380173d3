import { enqueueForEachRow } from "@civicstack/jobs"
import { decodeRows, Int8, now, sqlStoreTools } from "@civicstack/kit"
import type { StoreError } from "@civicstack/kit"
import type * as Statement from "@effect/sql/Statement"
import { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type { Context } from "effect"
import { Duration, Effect, Layer, Option, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { Criteria, keyedRecord } from "../../api/criteria"
import { EndedReason, Frequency, SubscriptionSource } from "../../api/records"
import type { EmailAddress } from "../../domain/address"
import { byCodeUnit, criteriaDigest, criteriaToStored, normaliseCriteria } from "../../domain/criteria"
import type { ListCriteria } from "../../domain/criteria"
import { fanOutJob } from "../../domain/jobs"
import type { NewNotification, Notification, Subscriber, SubscriberList, Subscription } from "../../domain/records"
import { firstFreeSlug, slugify } from "../../domain/slug"
import { AddressTaken, AlertsStore, DuplicateContentChange } from "../AlertsStore"
import type { AllowanceUse, Subscribed } from "../AlertsStore"
import { isUuid } from "../../domain/ids"

type Store = Context.Tag.Service<AlertsStore>

const RowId = Int8
const Timestamp = Schema.DateFromSelf
const OptionalTimestamp = Schema.NullOr(Schema.DateFromSelf)

const ListRow = Schema.Struct({
  id: RowId,
  title: Schema.String,
  slug: Schema.String,
  criteria_digest: Schema.String,
  tags: Criteria,
  links: Criteria,
  document_type: Schema.String,
  email_document_supertype: Schema.String,
  government_document_supertype: Schema.String,
  content_id: Schema.NullOr(Schema.String),
  created_at: Timestamp,
  updated_at: Timestamp
})

const toList = (row: typeof ListRow.Type): SubscriberList => ({
  id: row.id,
  title: row.title,
  slug: row.slug,
  criteria: {
    tags: normaliseCriteria(row.tags),
    links: normaliseCriteria(row.links),
    documentType: row.document_type,
    emailDocumentSupertype: row.email_document_supertype,
    governmentDocumentSupertype: row.government_document_supertype,
    contentId: row.content_id
  },
  criteriaDigest: row.criteria_digest,
  createdAt: row.created_at,
  updatedAt: row.updated_at
})

const SubscriberRow = Schema.Struct({
  id: RowId,
  address: Schema.String,
  sso_user_uid: Schema.NullOr(Schema.String),
  deactivated_at: OptionalTimestamp,
  created_at: Timestamp,
  updated_at: Timestamp
})

const toSubscriber = (row: typeof SubscriberRow.Type): Subscriber => ({
  id: row.id,
  address: row.address as EmailAddress,
  ssoUserUid: row.sso_user_uid,
  deactivatedAt: row.deactivated_at,
  createdAt: row.created_at,
  updatedAt: row.updated_at
})

const SubscriptionRow = Schema.Struct({
  id: Schema.String,
  subscriber_id: RowId,
  subscriber_list_id: RowId,
  frequency: Frequency,
  source: SubscriptionSource,
  ended_at: OptionalTimestamp,
  ended_reason: Schema.NullOr(EndedReason),
  sso_user_uid: Schema.NullOr(Schema.String),
  created_at: Timestamp,
  updated_at: Timestamp
})

const toSubscription = (row: typeof SubscriptionRow.Type): Subscription => ({
  id: row.id,
  subscriberId: row.subscriber_id,
  subscriberListId: row.subscriber_list_id,
  frequency: row.frequency,
  source: row.source,
  endedAt: row.ended_at,
  endedReason: row.ended_reason,
  ssoUserUid: row.sso_user_uid,
  createdAt: row.created_at,
  updatedAt: row.updated_at
})

/** `count(*)` is int8: a string from pg. */
const Count = RowId

const AllowanceRow = Schema.Struct({ granted: Schema.Boolean, window_start: Timestamp })

const ListWithCountsRow = Schema.Struct({
  ...ListRow.fields,
  immediately_count: Count,
  daily_count: Count,
  weekly_count: Count
})

const ListSubscriberRow = Schema.Struct({
  ...SubscriptionRow.fields,
  subscriber_address: Schema.String,
  subscriber_sso_user_uid: Schema.NullOr(Schema.String),
  subscriber_deactivated_at: OptionalTimestamp,
  subscriber_created_at: Timestamp,
  subscriber_updated_at: Timestamp
})

const EndedRow = Schema.Struct({ ...SubscriptionRow.fields, subscriber_deactivated: Schema.Boolean })
const SlugRow = Schema.Struct({ slug: Schema.String })
const IdRow = Schema.Struct({ id: RowId })
const InsertedRow = Schema.Struct({ id: Schema.String })

const timestamp = (date: Date | null) => (date === null ? null : date.toISOString())
const json = (value: unknown) => JSON.stringify(value)
const factsJson = (facts: ReadonlyMap<string, ReadonlyArray<string>>) => json(keyedRecord(facts))

/** PostgreSQL text cannot hold NUL: a value with one can match no stored row. */
const storable = (text: string) => !text.includes("\u0000")
const isRowId = (id: number) => Number.isSafeInteger(id) && id > 0

/** Slugs that may collide with candidates for `base` share its first characters. */
const SLUG_PREFIX_LENGTH = 200
/** An insert that loses a race tries again; after this many lost races something else is wrong. */
const MAX_RACE_ATTEMPTS = 10

/** A unique index refused the row: whether it was the one named. */
const violates = (error: SqlError, constraint: string) => {
  const cause = error.cause as { readonly code?: unknown; readonly constraint?: unknown } | undefined
  return cause?.code === "23505" && cause.constraint === constraint
}

export interface SqlStoreOptions {
  /**
   * The host's job queue is `@civicstack/jobs`' `layerSql` on this same database (as in the reference server): a
   * notification and its fan-out job are then written by one statement, one round trip instead of a transaction's
   * four. Left off, the service writes them in a transaction through the job queue, whatever it is.
   */
  readonly jobQueueInSameDatabase?: boolean
}

const makeSqlStore = (options: SqlStoreOptions) => Effect.gen(function*() {
  const { atomically: transaction, firstRow, rows, sql, storeError } = yield* sqlStoreTools("alerts store")

  /**
   * Inserts the notification, and whatever `alongside` adds to the same statement (CTEs after `recorded`, the
   * inserted row), so that they are written together or not at all.
   */
  const recordNotification = (
    notification: NewNotification,
    operation: string,
    alongside: (id: string) => Effect.Effect<Statement.Fragment | null, StoreError>
  ) =>
    Effect.gen(function*() {
      const createdAt = yield* now
      const recorded: Notification = { ...notification, id: randomUUID(), createdAt }
      const more = yield* alongside(recorded.id)
      const inserted = yield* firstRow(operation, InsertedRow, sql`
        WITH recorded AS (
          INSERT INTO alerts.notifications (id, subject, body, title, description, change_note, tags, links,
            document_type, email_document_supertype, government_document_supertype, content_id, base_path,
            public_updated_at, publishing_app, from_address_id, urgent, priority, header, footer, footnote, created_at)
          VALUES (${recorded.id}, ${recorded.subject}, ${recorded.body}, ${recorded.title}, ${recorded.description},
            ${recorded.changeNote}, ${factsJson(recorded.tags)}::jsonb, ${factsJson(recorded.links)}::jsonb,
            ${recorded.documentType}, ${recorded.emailDocumentSupertype}, ${recorded.governmentDocumentSupertype},
            ${recorded.contentId}, ${recorded.basePath}, ${timestamp(recorded.publicUpdatedAt)}::timestamptz,
            ${recorded.publishingApp}, ${recorded.fromAddressId}, ${recorded.urgent}, ${recorded.priority},
            ${recorded.header}, ${recorded.footer}, ${recorded.footnote}, ${timestamp(createdAt)}::timestamptz)
          ON CONFLICT DO NOTHING
          RETURNING id
        )${more === null ? sql`` : sql`, ${more}`}
        SELECT id FROM recorded`)
      if (Option.isSome(inserted)) return recorded
      const { basePath, contentId, publicUpdatedAt } = notification
      return contentId !== null && basePath !== null && publicUpdatedAt !== null
        ? yield* new DuplicateContentChange({ contentId, basePath, publicUpdatedAt })
        : yield* storeError(operation)("no row inserted")
    })

  const listColumns = sql.unsafe(`id, title, slug, criteria_digest, tags, links, document_type,
    email_document_supertype, government_document_supertype, content_id, created_at, updated_at`)
  const subscriberColumns = sql.unsafe(`id, address, sso_user_uid, deactivated_at, created_at, updated_at`)
  const subscriptionColumns = sql.unsafe(`id, subscriber_id, subscriber_list_id, frequency, source, ended_at,
    ended_reason, sso_user_uid, created_at, updated_at`)

  const listQuery = (operation: string, query: Effect.Effect<ReadonlyArray<unknown>, SqlError>) =>
    Effect.map(firstRow(operation, ListRow, query), Option.map(toList))
  const subscriberQuery = (operation: string, query: Effect.Effect<ReadonlyArray<unknown>, SqlError>) =>
    Effect.map(firstRow(operation, SubscriberRow, query), Option.map(toSubscriber))
  const subscriptionQuery = (operation: string, query: Effect.Effect<ReadonlyArray<unknown>, SqlError>) =>
    Effect.map(firstRow(operation, SubscriptionRow, query), Option.map(toSubscription))

  const listById = (id: number) =>
    isRowId(id)
      ? listQuery("listById", sql`SELECT ${listColumns} FROM alerts.subscriber_lists WHERE id = ${id}`)
      : Effect.succeed(Option.none())
  const subscriberById = (id: number) =>
    isRowId(id)
      ? subscriberQuery("subscriberById", sql`SELECT ${subscriberColumns} FROM alerts.subscribers WHERE id = ${id}`)
      : Effect.succeed(Option.none())

  const renameList = (digest: string, title: string, at: Date) =>
    listQuery("findOrCreateList", sql`
      UPDATE alerts.subscriber_lists
      SET title = ${title}, updated_at = CASE WHEN title = ${title} THEN updated_at ELSE ${timestamp(at)}::timestamptz END
      WHERE criteria_digest = ${digest}
      RETURNING ${listColumns}`)

  /** Inserts the list under the first free slug; `None` if a list with its criteria or that slug came first. */
  const insertList = (title: string, criteria: ListCriteria, digest: string, at: Date) =>
    Effect.gen(function*() {
      const base = slugify(title)
      const taken = yield* rows("findOrCreateList", SlugRow, sql`
        SELECT slug FROM alerts.subscriber_lists WHERE slug LIKE ${`${base.slice(0, SLUG_PREFIX_LENGTH)}%`}`)
      const slug = firstFreeSlug(base, new Set(taken.map((row) => row.slug)))
      return yield* listQuery("findOrCreateList", sql`
        INSERT INTO alerts.subscriber_lists (title, slug, criteria_digest, tags, links, document_type,
          email_document_supertype, government_document_supertype, content_id, created_at, updated_at)
        VALUES (${title}, ${slug}, ${digest}, ${json(criteriaToStored(criteria.tags))}::jsonb,
          ${json(criteriaToStored(criteria.links))}::jsonb, ${criteria.documentType}, ${criteria.emailDocumentSupertype},
          ${criteria.governmentDocumentSupertype}, ${criteria.contentId}, ${timestamp(at)}::timestamptz,
          ${timestamp(at)}::timestamptz)
        ON CONFLICT DO NOTHING
        RETURNING ${listColumns}`)
    })

  const startSubscription = (
    fields: Pick<Subscription, "subscriberId" | "subscriberListId" | "frequency" | "source">,
    at: Date,
    options: { readonly unlessActive: boolean }
  ) =>
    subscriptionQuery("startSubscription", sql`
      INSERT INTO alerts.subscriptions (id, subscriber_id, subscriber_list_id, frequency, source, created_at, updated_at)
      VALUES (${randomUUID()}, ${fields.subscriberId}, ${fields.subscriberListId}, ${fields.frequency}, ${fields.source},
        ${timestamp(at)}::timestamptz, ${timestamp(at)}::timestamptz)
      ${sql.unsafe(options.unlessActive ? "ON CONFLICT DO NOTHING" : "")}
      RETURNING ${subscriptionColumns}`)

  /** Ends an active subscription and starts its replacement at the new frequency; run in a transaction. */
  const replaceSubscription = (subscription: Subscription, frequency: Subscription["frequency"], at: Date) =>
    Effect.gen(function*() {
      yield* sql`
        UPDATE alerts.subscriptions
        SET ended_at = ${timestamp(at)}::timestamptz, ended_reason = 'frequency_changed', updated_at = ${timestamp(at)}::timestamptz
        WHERE id = ${subscription.id}`.pipe(Effect.mapError(storeError("replaceSubscription")))
      const replacement = yield* startSubscription({
        subscriberId: subscription.subscriberId,
        subscriberListId: subscription.subscriberListId,
        frequency,
        source: "frequency_changed"
      }, at, { unlessActive: false })
      return yield* Option.match(replacement, {
        onNone: () => Effect.fail(storeError("replaceSubscription")("no row inserted")),
        onSome: Effect.succeed
      })
    })

  const activeSubscriptionFor = (subscriberId: number, subscriberListId: number) =>
    subscriptionQuery("subscribe", sql`
      SELECT ${subscriptionColumns} FROM alerts.subscriptions
      WHERE subscriber_id = ${subscriberId} AND subscriber_list_id = ${subscriberListId} AND ended_at IS NULL
      FOR UPDATE`)

  /**
   * Locks the subscriber's row, so that changes to one subscriber's subscriptions happen one after another. Every
   * such change takes this lock before any subscription row, so two of them cannot wait for each other; `NO KEY`
   * leaves the foreign key checks of other inserts free.
   */
  const lockSubscriber = (operation: string, id: number) =>
    firstRow(operation, IdRow, sql`SELECT id FROM alerts.subscribers WHERE id = ${id} FOR NO KEY UPDATE`)

  const lockSubscriberOf = (operation: string, subscriptionId: string) =>
    firstRow(operation, IdRow, sql`
      SELECT id FROM alerts.subscribers
      WHERE id = (SELECT subscriber_id FROM alerts.subscriptions WHERE id = ${subscriptionId})
      FOR NO KEY UPDATE`)

  const store: Store = {
    transaction,

    findOrCreateList: ({ criteria, title }) =>
      Effect.gen(function*() {
        const at = yield* now
        const digest = criteriaDigest(criteria)
        for (let attempt = 1; attempt <= MAX_RACE_ATTEMPTS; attempt++) {
          const existing = yield* renameList(digest, title, at)
          if (Option.isSome(existing)) return { list: existing.value, created: false }
          const inserted = yield* insertList(title, criteria, digest, at)
          if (Option.isSome(inserted)) return { list: inserted.value, created: true }
        }
        return yield* storeError("findOrCreateList")(`lost ${MAX_RACE_ATTEMPTS} races for a slug`)
      }),
    listByCriteria: (criteria) =>
      listQuery("listByCriteria", sql`
        SELECT ${listColumns} FROM alerts.subscriber_lists WHERE criteria_digest = ${criteriaDigest(criteria)}`),
    listBySlug: (slug) =>
      storable(slug)
        ? listQuery("listBySlug", sql`SELECT ${listColumns} FROM alerts.subscriber_lists WHERE slug = ${slug}`)
        : Effect.succeed(Option.none()),
    listById,
    listsWithCounts: Effect.map(
      rows("listsWithCounts", ListWithCountsRow, sql`
        WITH counts AS (
          SELECT subscriber_list_id,
            count(*) FILTER (WHERE frequency = 'immediately') AS immediately_count,
            count(*) FILTER (WHERE frequency = 'daily') AS daily_count,
            count(*) FILTER (WHERE frequency = 'weekly') AS weekly_count
          FROM alerts.subscriptions
          WHERE ended_at IS NULL
          GROUP BY subscriber_list_id
        )
        SELECT ${listColumns}, COALESCE(immediately_count, 0) AS immediately_count,
          COALESCE(daily_count, 0) AS daily_count, COALESCE(weekly_count, 0) AS weekly_count
        FROM alerts.subscriber_lists LEFT JOIN counts ON counts.subscriber_list_id = subscriber_lists.id
        ORDER BY slug COLLATE "C"`),
      (found) =>
        found.map((row) => ({
          list: toList(row),
          activeSubscriptions: { immediately: row.immediately_count, daily: row.daily_count, weekly: row.weekly_count }
        }))
    ),

    subscriberById,
    subscriberByAddress: (address) =>
      storable(address)
        ? subscriberQuery("subscriberByAddress", sql`
          SELECT ${subscriberColumns} FROM alerts.subscribers WHERE lower(address) = lower(${address})`)
        : Effect.succeed(Option.none()),
    createSubscriber: (address) =>
      Effect.gen(function*() {
        const at = yield* now
        const created = yield* subscriberQuery("createSubscriber", sql`
          INSERT INTO alerts.subscribers (address, created_at, updated_at)
          VALUES (${address}, ${timestamp(at)}::timestamptz, ${timestamp(at)}::timestamptz)
          ON CONFLICT DO NOTHING
          RETURNING ${subscriberColumns}`)
        return yield* Option.match(created, {
          onNone: () => Effect.fail(new AddressTaken({ address })),
          onSome: Effect.succeed
        })
      }),
    changeAddress: (id, address) =>
      Effect.gen(function*() {
        if (!isRowId(id)) return Option.none()
        const at = yield* now
        const changed = yield* sql`
          UPDATE alerts.subscribers SET address = ${address}, updated_at = ${timestamp(at)}::timestamptz
          WHERE id = ${id} AND NOT EXISTS (
            SELECT 1 FROM alerts.subscribers other WHERE lower(other.address) = lower(${address}) AND other.id <> ${id}
          )
          RETURNING ${subscriberColumns}`.pipe(
          Effect.catchIf(
            (error) => violates(error, "subscribers_by_address"),
            () => Effect.fail(new AddressTaken({ address }))
          ),
          Effect.flatMap(decodeRows(SubscriberRow)),
          Effect.mapError((error) => error instanceof AddressTaken ? error : storeError("changeAddress")(error))
        )
        const [row] = changed
        if (row !== undefined) return Option.some(toSubscriber(row))
        const exists = yield* subscriberById(id)
        return Option.isSome(exists) ? yield* new AddressTaken({ address }) : Option.none()
      }),
    deactivateSubscriber: (id, reason) =>
      Effect.gen(function*() {
        if (!isRowId(id)) return Option.none()
        const at = timestamp(yield* now)
        return yield* subscriberQuery("deactivateSubscriber", sql`
          WITH deactivated AS (
            UPDATE alerts.subscribers SET deactivated_at = ${at}::timestamptz, updated_at = ${at}::timestamptz
            WHERE id = ${id} AND deactivated_at IS NULL
            RETURNING ${subscriberColumns}
          ), ended AS (
            UPDATE alerts.subscriptions
            SET ended_at = ${at}::timestamptz, ended_reason = ${reason}, updated_at = ${at}::timestamptz
            WHERE subscriber_id IN (SELECT id FROM deactivated) AND ended_at IS NULL
          )
          SELECT * FROM deactivated`)
      }),
    useAllowance: (key, limit, window) =>
      Effect.gen(function*() {
        const at = yield* now
        const renewedIfBefore = new Date(at.getTime() - Duration.toMillis(window))
        // a refused use leaves the row as it was, so the statement's snapshot still shows it
        const found = yield* firstRow("useAllowance", AllowanceRow, sql`
          WITH used AS (
            INSERT INTO alerts.allowances AS a (key, window_start, used) VALUES (${key}, ${at}::timestamptz, 1)
            ON CONFLICT (key) DO UPDATE SET
              window_start = CASE WHEN a.window_start <= ${renewedIfBefore}::timestamptz THEN ${at}::timestamptz
                ELSE a.window_start END,
              used = CASE WHEN a.window_start <= ${renewedIfBefore}::timestamptz THEN 1 ELSE a.used + 1 END
            WHERE a.window_start <= ${renewedIfBefore}::timestamptz OR a.used < ${limit}
            RETURNING a.window_start
          )
          SELECT true AS granted, window_start FROM used
          UNION ALL
          SELECT false, window_start FROM alerts.allowances WHERE key = ${key} AND NOT EXISTS (SELECT 1 FROM used)`)
        return Option.match(found, {
          onNone: (): AllowanceUse => ({ granted: true }),
          onSome: (row): AllowanceUse =>
            row.granted
              ? { granted: true }
              : { granted: false, renewsAt: new Date(row.window_start.getTime() + Duration.toMillis(window)) }
        })
      }),
    lockSubscriber: (id) =>
      isRowId(id)
        ? Effect.asVoid(Effect.mapError(sql`SELECT id FROM alerts.subscribers WHERE id = ${id} FOR UPDATE`, storeError("lockSubscriber")))
        : Effect.void,
    reactivateSubscriber: (id) =>
      Effect.gen(function*() {
        if (!isRowId(id)) return Option.none()
        const at = yield* now
        return yield* subscriberQuery("reactivateSubscriber", sql`
          UPDATE alerts.subscribers
          SET deactivated_at = NULL,
            updated_at = CASE WHEN deactivated_at IS NULL THEN updated_at ELSE ${timestamp(at)}::timestamptz END
          WHERE id = ${id}
          RETURNING ${subscriberColumns}`)
      }),

    subscribe: (input) =>
      transaction(Effect.gen(function*() {
        const at = yield* now
        const subscriber = yield* lockSubscriber("subscribe", input.subscriberId)
        if (Option.isNone(subscriber)) return yield* storeError("subscribe")("no such subscriber")
        // the partial unique index admits one active subscription; a lost race finds the winner's next time round
        for (let attempt = 1; attempt <= MAX_RACE_ATTEMPTS; attempt++) {
          const active = yield* activeSubscriptionFor(input.subscriberId, input.subscriberListId)
          if (Option.isSome(active)) {
            if (active.value.frequency === input.frequency) {
              return { subscription: active.value, outcome: "unchanged" } satisfies Subscribed
            }
            const replacement = yield* replaceSubscription(active.value, input.frequency, at)
            return { subscription: replacement, outcome: "frequency_changed" } satisfies Subscribed
          }
          const created = yield* startSubscription(input, at, { unlessActive: true })
          if (Option.isSome(created)) return { subscription: created.value, outcome: "created" } satisfies Subscribed
        }
        return yield* storeError("subscribe")(`lost ${MAX_RACE_ATTEMPTS} races for the active subscription`)
      })),
    changeFrequency: (id, frequency) =>
      isUuid(id)
        ? transaction(Effect.gen(function*() {
          const at = yield* now
          yield* lockSubscriberOf("changeFrequency", id)
          const active = yield* subscriptionQuery("changeFrequency", sql`
            SELECT ${subscriptionColumns} FROM alerts.subscriptions WHERE id = ${id} AND ended_at IS NULL FOR UPDATE`)
          if (Option.isNone(active)) return Option.none()
          if (active.value.frequency === frequency) return active
          return Option.some(yield* replaceSubscription(active.value, frequency, at))
        }))
        : Effect.succeed(Option.none()),
    endSubscription: (id, reason) =>
      isUuid(id)
        ? transaction(Effect.gen(function*() {
          const at = timestamp(yield* now)
          yield* lockSubscriberOf("endSubscription", id)
          // the CTEs see the subscriptions as they were before this statement, so `ended` is left out by hand
          const ended = yield* firstRow("endSubscription", EndedRow, sql`
            WITH ended AS (
              UPDATE alerts.subscriptions
              SET ended_at = ${at}::timestamptz, ended_reason = ${reason}, updated_at = ${at}::timestamptz
              WHERE id = ${id} AND ended_at IS NULL
              RETURNING ${subscriptionColumns}
            ), deactivated AS (
              UPDATE alerts.subscribers subscriber
              SET deactivated_at = ${at}::timestamptz, updated_at = ${at}::timestamptz
              WHERE subscriber.id IN (SELECT subscriber_id FROM ended) AND subscriber.deactivated_at IS NULL
                AND NOT EXISTS (
                  SELECT 1 FROM alerts.subscriptions other
                  WHERE other.subscriber_id = subscriber.id AND other.ended_at IS NULL
                    AND other.id NOT IN (SELECT id FROM ended)
                )
              RETURNING subscriber.id
            )
            SELECT ended.*, EXISTS (SELECT 1 FROM deactivated) AS subscriber_deactivated FROM ended`)
          return Option.map(ended, (row) => ({
            subscription: toSubscription(row),
            subscriberDeactivated: row.subscriber_deactivated
          }))
        }))
        : Effect.succeed(Option.none()),
    activeSubscriptionsOf: (subscriberId) =>
      Effect.gen(function*() {
        if (!isRowId(subscriberId)) return []
        const subscriptions = yield* rows("activeSubscriptionsOf", SubscriptionRow, sql`
          SELECT ${subscriptionColumns} FROM alerts.subscriptions
          WHERE subscriber_id = ${subscriberId} AND ended_at IS NULL`)
        if (subscriptions.length === 0) return []
        const lists = yield* rows("activeSubscriptionsOf", ListRow, sql`
          SELECT ${listColumns} FROM alerts.subscriber_lists
          WHERE id IN ${sql.in(subscriptions.map((row) => row.subscriber_list_id))}`)
        const listsById = new Map(lists.map((row) => [row.id, toList(row)]))
        return subscriptions
          .map((row) => ({ subscription: toSubscription(row), list: listsById.get(row.subscriber_list_id)! }))
          .sort((a, b) => byCodeUnit(a.list.title, b.list.title) || byCodeUnit(a.subscription.id, b.subscription.id))
      }),
    activeSubscribersOf: (subscriberListId) =>
      isRowId(subscriberListId)
        ? Effect.map(
          rows("activeSubscribersOf", ListSubscriberRow, sql`
            SELECT subscription.id, subscription.subscriber_id, subscription.subscriber_list_id, subscription.frequency,
              subscription.source, subscription.ended_at, subscription.ended_reason, subscription.sso_user_uid,
              subscription.created_at, subscription.updated_at,
              subscriber.address AS subscriber_address, subscriber.sso_user_uid AS subscriber_sso_user_uid,
              subscriber.deactivated_at AS subscriber_deactivated_at, subscriber.created_at AS subscriber_created_at,
              subscriber.updated_at AS subscriber_updated_at
            FROM alerts.subscriptions subscription
            JOIN alerts.subscribers subscriber ON subscriber.id = subscription.subscriber_id
            WHERE subscription.subscriber_list_id = ${subscriberListId} AND subscription.ended_at IS NULL
            ORDER BY subscription.subscriber_id`),
          (found) =>
            found.map((row) => ({
              subscription: toSubscription(row),
              subscriber: toSubscriber({
                id: row.subscriber_id,
                address: row.subscriber_address,
                sso_user_uid: row.subscriber_sso_user_uid,
                deactivated_at: row.subscriber_deactivated_at,
                created_at: row.subscriber_created_at,
                updated_at: row.subscriber_updated_at
              })
            }))
        )
        : Effect.succeed([]),
    subscriptionById: (id) =>
      Effect.gen(function*() {
        if (!isUuid(id)) return Option.none()
        const found = yield* subscriptionQuery("subscriptionById", sql`
          SELECT ${subscriptionColumns} FROM alerts.subscriptions WHERE id = ${id}`)
        if (Option.isNone(found)) return Option.none()
        const subscription = found.value
        const list = yield* listById(subscription.subscriberListId)
        const subscriber = yield* subscriberById(subscription.subscriberId)
        return Option.all({ list, subscriber }).pipe(Option.map((both) => ({ subscription, ...both })))
      }),

    insertNotification: (notification) => recordNotification(notification, "insertNotification", () => Effect.succeed(null)),
    ...(options.jobQueueInSameDatabase === true
      ? {
        insertNotificationAndFanOutJob: (notification: NewNotification) =>
          recordNotification(notification, "insertNotificationAndFanOutJob", (id) =>
            enqueueForEachRow(fanOutJob, { notificationId: id }, "recorded").pipe(
              Effect.provideService(SqlClient, sql),
              Effect.mapError(storeError("insertNotificationAndFanOutJob"))
            ))
      }
      : {}),
    matchingListIds: (notification) => {
      const tags = factsJson(notification.tags)
      const links = factsJson(notification.links)
      return Effect.map(
        rows("matchingListIds", IdRow, sql`
          SELECT list.id FROM alerts.subscriber_lists list
          WHERE (list.tags <> '{}'::jsonb OR list.links <> '{}'::jsonb OR list.document_type <> ''
              OR list.email_document_supertype <> '' OR list.government_document_supertype <> ''
              OR list.content_id IS NOT NULL)
            AND (list.document_type = '' OR list.document_type = ${notification.documentType})
            AND (list.email_document_supertype = '' OR list.email_document_supertype = ${notification.emailDocumentSupertype})
            AND (list.government_document_supertype = ''
              OR list.government_document_supertype = ${notification.governmentDocumentSupertype})
            AND (list.content_id IS NULL OR list.content_id = ${notification.contentId})
            AND NOT EXISTS (
              SELECT 1
              FROM jsonb_each(CASE WHEN list.links <> '{}'::jsonb THEN list.links ELSE list.tags END) AS c(name, criterion),
                LATERAL (
                  SELECT (CASE WHEN list.links <> '{}'::jsonb THEN ${links}::jsonb ELSE ${tags}::jsonb END) -> c.name AS given
                ) facts
              WHERE NOT COALESCE(
                CASE WHEN c.criterion ? 'all'
                  THEN facts.given @> (c.criterion -> 'all')
                  ELSE facts.given ?| ARRAY(SELECT jsonb_array_elements_text(c.criterion -> 'any'))
                END,
                false
              )
            )
          ORDER BY list.id`),
        (found) => found.map((row) => row.id)
      )
    }
  }
  return store
})

/** Lists, subscribers, subscriptions and notifications over the host's `SqlClient`; run `migrate` first. */
export const subscriptionsSql = (options: SqlStoreOptions = {}): Layer.Layer<AlertsStore, never, SqlClient> =>
  Layer.effect(AlertsStore, makeSqlStore(options))
