import { Int8, now, sqlStoreTools } from "@civicstack/kit"
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type { Context } from "effect"
import { Duration, Effect, Layer, Option, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { UNSUBSCRIBE_SEPARATOR } from "../../domain/bodyParts"
import type { SharedEmailContent } from "../../domain/compose"
import { immediateEmailBody } from "../../domain/compose"
import type { DigestRun, DigestWindow } from "../../domain/digests"
import type { Notification } from "../../domain/records"
import type { ClaimedBody, ClaimedEmail, FanOutChunk, StoredEmail } from "../EmailStore"
import { EmailStore } from "../EmailStore"
import { deliveryReportStatements } from "./deliveryReports"
import { isUuid } from "../../domain/ids"

type Service = Context.Tag.Service<EmailStore>

const Count = Int8
const Timestamp = Schema.DateFromSelf
const Facts = Schema.Record({ key: Schema.String, value: Schema.Array(Schema.String) })
const NullableText = Schema.NullOr(Schema.String)

const NotificationRow = Schema.Struct({
  id: Schema.String,
  subject: NullableText,
  body: NullableText,
  title: NullableText,
  description: NullableText,
  change_note: NullableText,
  tags: Facts,
  links: Facts,
  document_type: NullableText,
  email_document_supertype: NullableText,
  government_document_supertype: NullableText,
  content_id: NullableText,
  base_path: NullableText,
  public_updated_at: Schema.NullOr(Timestamp),
  publishing_app: NullableText,
  from_address_id: NullableText,
  urgent: Schema.Boolean,
  priority: Schema.Literal("normal", "high"),
  header: NullableText,
  footer: NullableText,
  footnote: NullableText,
  created_at: Timestamp
})

const toNotification = (row: typeof NotificationRow.Type): Notification => ({
  id: row.id,
  subject: row.subject,
  body: row.body,
  title: row.title,
  description: row.description,
  changeNote: row.change_note,
  tags: new Map(Object.entries(row.tags)),
  links: new Map(Object.entries(row.links)),
  documentType: row.document_type,
  emailDocumentSupertype: row.email_document_supertype,
  governmentDocumentSupertype: row.government_document_supertype,
  contentId: row.content_id,
  basePath: row.base_path,
  publicUpdatedAt: row.public_updated_at,
  publishingApp: row.publishing_app,
  fromAddressId: row.from_address_id,
  urgent: row.urgent,
  priority: row.priority,
  header: row.header,
  footer: row.footer,
  footnote: row.footnote,
  createdAt: row.created_at
})

/** Subscription ids joined by commas (an array column would decode differently on pg and PGlite). */
const subscriptionIdList = (joined: string | null) => (joined === null || joined === "" ? [] : joined.split(","))

const ClaimedRow = Schema.Struct({
  id: Schema.String,
  address: Schema.String,
  subject: NullableText,
  body: NullableText,
  notification_id: NullableText,
  unsubscribe_lines: NullableText,
  attempts: Count,
  subscription_ids: NullableText
})

/** A row with its whole body, or (since migration 7) a notification's email holding only its unsubscribe lines. */
const claimedBody = (row: typeof ClaimedRow.Type): ClaimedBody =>
  row.body === null && row.unsubscribe_lines !== null && row.notification_id !== null
    ? { _tag: "AroundSharedContent", notificationId: row.notification_id, unsubscribeLines: row.unsubscribe_lines }
    : { _tag: "Whole", text: row.body ?? "" }

const ContentRow = Schema.Struct({
  notification_id: Schema.String,
  subject: Schema.String,
  body_before: Schema.String,
  body_after: Schema.String
})

const EmailRow = Schema.Struct({
  id: Schema.String,
  address: Schema.String,
  subject: NullableText,
  body: NullableText,
  unsubscribe_lines: NullableText,
  body_before: NullableText,
  body_after: NullableText,
  status: Schema.Literal("pending", "sending", "sent", "failed"),
  attempts: Count,
  next_attempt_at: Timestamp,
  failure_reason: NullableText,
  notification_id: NullableText,
  subscriber_id: Schema.NullOr(Count),
  digest_run_id: NullableText,
  subscription_ids: NullableText,
  created_at: Timestamp,
  sent_at: Schema.NullOr(Timestamp)
})

/** The whole body: the row's own, or its unsubscribe lines inside the shared content; null once blanked. */
const storedBody = (row: typeof EmailRow.Type) =>
  row.body ?? (row.unsubscribe_lines === null || row.body_before === null || row.body_after === null
    ? null
    : immediateEmailBody({ bodyBefore: row.body_before, bodyAfter: row.body_after }, row.unsubscribe_lines))

const toStoredEmail = (row: typeof EmailRow.Type): StoredEmail => ({
  id: row.id,
  address: row.address,
  subject: row.subject ?? "",
  body: storedBody(row),
  status: row.status,
  attempts: row.attempts,
  nextAttemptAt: row.next_attempt_at,
  failureReason: row.failure_reason,
  notificationId: row.notification_id,
  subscriberId: row.subscriber_id,
  digestRunId: row.digest_run_id,
  subscriptionIds: subscriptionIdList(row.subscription_ids),
  createdAt: row.created_at,
  sentAt: row.sent_at
})

const CountRow = Schema.Struct({ count: Count })
const IdRow = Schema.Struct({ id: Count })
const RangeRow = Schema.Struct({ lowest: Schema.NullOr(Count), highest: Schema.NullOr(Count) })

const DigestRunRow = Schema.Struct({
  id: Schema.String,
  frequency: Schema.Literal("daily", "weekly"),
  window_start: Timestamp,
  window_end: Timestamp,
  completed_at: Schema.NullOr(Timestamp)
})
const toDigestRun = (row: typeof DigestRunRow.Type): DigestRun => ({
  id: row.id,
  frequency: row.frequency,
  start: row.window_start,
  end: row.window_end,
  completedAt: row.completed_at
})
const DigestEntryRow = Schema.Struct({
  subscriber_id: Count,
  address: Schema.String,
  subscription_id: Schema.String,
  list_title: Schema.String,
  notification_id: Schema.String
})
const OutcomeRow = Schema.Struct({ status: Schema.String })
const FiguresRow = Schema.Struct({ waiting: Count, oldest: Schema.NullOr(Timestamp) })
const StatusFiguresRow = Schema.Struct({
  pending: Count,
  sending: Count,
  sent: Count,
  failed: Count,
  oldest_pending: Schema.NullOr(Timestamp)
})

/** Old rows are deleted this many at a time, so that no statement holds many locks for long. */
const PRUNE_BATCH = 5_000

const iso = (date: Date) => date.toISOString()

const makeSqlEmailStore = Effect.gen(function*() {
  const tools = yield* sqlStoreTools("alerts email store")
  const { rows, sql, storeError } = tools
  const count = (operation: string, query: Effect.Effect<ReadonlyArray<unknown>, SqlError>) =>
    Effect.map(rows(operation, CountRow, query), (found) => found[0]?.count ?? 0)

  /** Emails written before migration 4 have no `subscription_ids` and keep their links in `email_subscriptions`. */
  const subscriptionIdsOf = `COALESCE(e.subscription_ids, (SELECT string_agg(es.subscription_id::text, ',' ORDER BY es.subscription_id)
      FROM alerts.email_subscriptions es WHERE es.email_id = e.id)) AS subscription_ids`

  /** Email rows with the shared content of the notification emails that have no subject and body of their own. */
  const emailsWithContent = sql.unsafe(`alerts.emails e
    LEFT JOIN alerts.notification_contents c ON c.notification_id = e.notification_id AND e.body IS NULL`)
  const emailColumns = sql.unsafe(`e.id, e.address, COALESCE(e.subject, c.subject) AS subject, e.body,
    e.unsubscribe_lines, c.body_before, c.body_after, e.status, e.attempts, e.next_attempt_at, e.failure_reason,
    e.notification_id, e.subscriber_id, e.digest_run_id, e.created_at, e.sent_at, ${subscriptionIdsOf}`)

  /** Settles a claimed email with `changes`, when the claim still holds it; returns the status it was left in. */
  const settle = (
    operation: string,
    claim: { readonly id: string; readonly attempt: number },
    changes: Effect.Effect<ReadonlyArray<unknown>, SqlError>
  ) => Effect.map(rows(operation, OutcomeRow, changes), (found) => Option.fromNullable(found[0]?.status))

  const notificationColumns = sql.unsafe(`n.id, n.subject, n.body, n.title, n.description, n.change_note, n.tags,
    n.links, n.document_type, n.email_document_supertype, n.government_document_supertype, n.content_id, n.base_path,
    n.public_updated_at, n.publishing_app, n.from_address_id, n.urgent, n.priority, n.header, n.footer, n.footnote,
    n.created_at`)

  const digestRunByWindow = (window: DigestWindow) =>
    rows("startDigestRun", DigestRunRow, sql`
      SELECT id, frequency, window_start, window_end, completed_at FROM alerts.digest_runs
      WHERE frequency = ${window.frequency} AND window_end = ${iso(window.end)}::timestamptz`)

  /**
   * A UUIDv7-style id: `at` in milliseconds in the first 48 bits, version 7, the rest random. The ids of one chunk
   * land side by side at the end of the primary key instead of at random places all over it, which kept touching
   * pages of an index larger than the cache (a random id per row made a 600,000-row insert ~28% slower).
   */
  const timeOrderedId = (at: Date) =>
    sql`encode(overlay(uuid_send(gen_random_uuid()) PLACING decode(${
      Math.max(0, at.getTime()).toString(16).padStart(12, "0").slice(-12)
    }::text || '70', 'hex') FROM 1 FOR 7), 'hex')::uuid`

  // as `escapeLinkText`: line breaks to spaces, then \ [ ] < > escaped
  const escapedListTitle = sql.unsafe(`regexp_replace(
    translate(l.title, chr(13) || chr(10) || chr(8232) || chr(8233), '    '), '([\\\\\\[\\]<>])', '\\\\\\1', 'g')`)
  const unsubscribeLine = (unsubscribeUrlPrefix: string) =>
    sql`'[Unsubscribe from ' || ${escapedListTitle} || '](' || ${unsubscribeUrlPrefix}::text || s.id::text || ')'`
  /** The chunk's active subscribers (ids bounded on both tables, so that each is read by range, not from the start). */
  const chunkSubscribers = ({ afterSubscriberId, throughSubscriberId }: FanOutChunk) =>
    sql`JOIN alerts.subscribers subscriber ON subscriber.id = s.subscriber_id
      WHERE s.ended_at IS NULL AND s.frequency = 'immediately'
        AND s.subscriber_id > ${afterSubscriberId} AND s.subscriber_id <= ${throughSubscriberId}
        AND subscriber.id > ${afterSubscriberId} AND subscriber.id <= ${throughSubscriberId}
        AND subscriber.deactivated_at IS NULL`

  /** Emails refer to their notification's content, so none is written before it is stored. */
  const contentStored = (notificationId: string) =>
    sql`EXISTS (SELECT 1 FROM alerts.notification_contents WHERE notification_id = ${notificationId})`

  /**
   * A notification that matched one list: a subscriber has at most one active subscription to it, so each
   * subscription is one email and nothing needs grouping.
   */
  const oneListChunk = (chunk: FanOutChunk, listId: number, at: Date) => {
    const { notificationId, unsubscribeUrlPrefix } = chunk
    return sql`
      WITH inserted AS (
        INSERT INTO alerts.emails (id, address, unsubscribe_lines, status, attempts, next_attempt_at, notification_id,
          subscriber_id, subscription_ids, created_at, updated_at)
        SELECT ${timeOrderedId(at)}, subscriber.address, ${unsubscribeLine(unsubscribeUrlPrefix)},
          'pending', 0, ${iso(at)}::timestamptz, ${notificationId}, s.subscriber_id, s.id::text, ${iso(at)}::timestamptz,
          ${iso(at)}::timestamptz
        FROM alerts.subscriber_lists l
        JOIN alerts.subscriptions s ON s.subscriber_list_id = l.id
        ${chunkSubscribers(chunk)}
          AND l.id = ${listId} AND ${contentStored(notificationId)}
        ON CONFLICT DO NOTHING
        RETURNING 1
      )
      SELECT count(*) AS count FROM inserted`
  }

  /** One email per subscriber, listing each of their subscriptions to the lists the notification matched. */
  const manyListsChunk = (chunk: FanOutChunk, at: Date) => {
    const { notificationId, unsubscribeUrlPrefix } = chunk
    return sql`
      WITH inserted AS (
        INSERT INTO alerts.emails (id, address, unsubscribe_lines, status, attempts, next_attempt_at, notification_id,
          subscriber_id, subscription_ids, created_at, updated_at)
        SELECT ${timeOrderedId(at)}, subscriber.address,
          string_agg(${unsubscribeLine(unsubscribeUrlPrefix)}, ${UNSUBSCRIBE_SEPARATOR}::text ORDER BY l.title COLLATE "C", s.id),
          'pending', 0, ${iso(at)}::timestamptz, ${notificationId}, s.subscriber_id,
          string_agg(s.id::text, ',' ORDER BY s.id), ${iso(at)}::timestamptz, ${iso(at)}::timestamptz
        FROM alerts.notification_matches m
        JOIN alerts.subscriber_lists l ON l.id = m.subscriber_list_id
        JOIN alerts.subscriptions s ON s.subscriber_list_id = m.subscriber_list_id
        ${chunkSubscribers(chunk)}
          AND m.notification_id = ${notificationId} AND ${contentStored(notificationId)}
        GROUP BY s.subscriber_id, subscriber.address
        ON CONFLICT DO NOTHING
        RETURNING 1
      )
      SELECT count(*) AS count FROM inserted`
  }

  const store: Service = {
    notification: (id) =>
      isUuid(id)
        ? Effect.map(
          rows("notification", NotificationRow, sql`
            SELECT ${notificationColumns} FROM alerts.notifications n WHERE n.id = ${id}`),
          (found) => Option.map(Option.fromNullable(found[0]), toNotification)
        )
        : Effect.succeed(Option.none()),

    recordMatches: (notificationId, listIds) =>
      listIds.length === 0 ? Effect.void : sql`
        INSERT INTO alerts.notification_matches (notification_id, subscriber_list_id)
        SELECT ${notificationId}::uuid, list_id::bigint
        FROM jsonb_array_elements_text(${JSON.stringify(listIds)}::jsonb) AS ids(list_id)
        ON CONFLICT DO NOTHING`.pipe(Effect.asVoid, Effect.mapError(storeError("recordMatches"))),

    storeContent: (notificationId, content) =>
      Effect.flatMap(now, (at) =>
        sql`
          INSERT INTO alerts.notification_contents (notification_id, subject, body_before, body_after, fanned_out_at)
          VALUES (${notificationId}, ${content.subject}, ${content.bodyBefore}, ${content.bodyAfter},
            ${iso(at)}::timestamptz)
          ON CONFLICT (notification_id) DO UPDATE SET fanned_out_at = EXCLUDED.fanned_out_at`.pipe(
          Effect.asVoid,
          Effect.mapError(storeError("storeContent"))
        )),

    contentsOf: (notificationIds) => {
      const ids = [...new Set(notificationIds.filter(isUuid))]
      return ids.length === 0 ? Effect.succeed(new Map()) : Effect.map(
        rows("contentsOf", ContentRow, sql`
          SELECT notification_id, subject, body_before, body_after FROM alerts.notification_contents
          WHERE notification_id IN (SELECT id::uuid FROM jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb) AS ids(id))`),
        (found) =>
          new Map(found.map((row): [string, SharedEmailContent] => [
            row.notification_id,
            { subject: row.subject, bodyBefore: row.body_before, bodyAfter: row.body_after }
          ]))
      )
    },

    highestSubscriberId: count("highestSubscriberId", sql`SELECT COALESCE(max(id), 0) AS count FROM alerts.subscribers`),

    // per list, so that each list's lowest and highest come from the ends of its index rather than a scan of it
    immediateSubscriberRange: (notificationId) =>
      isUuid(notificationId)
        ? Effect.map(
          rows("immediateSubscriberRange", RangeRow, sql`
            SELECT min(r.lowest) AS lowest, max(r.highest) AS highest
            FROM alerts.notification_matches m
            CROSS JOIN LATERAL (
              SELECT min(s.subscriber_id) AS lowest, max(s.subscriber_id) AS highest FROM alerts.subscriptions s
              WHERE s.subscriber_list_id = m.subscriber_list_id AND s.frequency = 'immediately' AND s.ended_at IS NULL
            ) r
            WHERE m.notification_id = ${notificationId}`),
          ([range]) =>
            range?.lowest == null || range.highest == null
              ? Option.none()
              : Option.some({ lowest: range.lowest, highest: range.highest })
        )
        : Effect.succeed(Option.none()),

    fanOutChunk: (chunk) =>
      Effect.flatMap(
        rows("fanOutChunk", IdRow, sql`
          SELECT subscriber_list_id AS id FROM alerts.notification_matches WHERE notification_id = ${chunk.notificationId}
          LIMIT 2`),
        (lists) =>
          lists.length === 0
            ? Effect.succeed(0)
            : Effect.flatMap(now, (at) =>
              count(
                "fanOutChunk",
                lists.length === 1 ? oneListChunk(chunk, lists[0]!.id, at) : manyListsChunk(chunk, at)
              ))
      ),

    queueEmail: (email) =>
      Effect.flatMap(now, (at) => {
        const id = randomUUID()
        return sql`
          INSERT INTO alerts.emails (id, address, subject, body, status, attempts, next_attempt_at, subscription_ids,
            created_at, updated_at)
          VALUES (${id}, ${email.address}, ${email.subject}, ${email.body}, 'pending', 0, ${iso(at)}::timestamptz, '',
            ${iso(at)}::timestamptz, ${iso(at)}::timestamptz)`.pipe(
          Effect.as(id),
          Effect.mapError(storeError("queueEmail"))
        )
      }),

    singleEmailsSince: (address, subject, since) =>
      Effect.map(
        rows("singleEmailsSince", FiguresRow, sql`
          SELECT count(*) AS waiting, min(created_at) AS oldest FROM alerts.emails
          WHERE address = ${address} AND subject = ${subject} AND created_at > ${iso(since)}::timestamptz
            AND notification_id IS NULL AND digest_run_id IS NULL`),
        (found) => ({ count: found[0]?.waiting ?? 0, oldest: found[0]?.oldest ?? null })
      ),

    claim: (limit, lease) =>
      Effect.flatMap(now, (at) => {
        const until = iso(new Date(at.getTime() + Duration.toMillis(lease)))
        return Effect.map(
          rows("claim", ClaimedRow, sql`
            UPDATE alerts.emails e
            SET status = 'sending', attempts = e.attempts + 1, claimed_until = ${until}::timestamptz,
              next_attempt_at = ${until}::timestamptz, updated_at = ${iso(at)}::timestamptz
            FROM (
              SELECT id FROM alerts.emails
              WHERE status IN ('pending', 'sending') AND next_attempt_at <= ${iso(at)}::timestamptz
              ORDER BY next_attempt_at
              LIMIT ${limit}
              FOR UPDATE SKIP LOCKED
            ) due
            WHERE e.id = due.id
            RETURNING e.id, e.address, e.body, e.notification_id, e.unsubscribe_lines, e.attempts,
              COALESCE(e.subject, (SELECT c.subject FROM alerts.notification_contents c
                WHERE c.notification_id = e.notification_id)) AS subject,
              ${sql.unsafe(subscriptionIdsOf)}`),
          (claimed) =>
            claimed.map((row): ClaimedEmail => ({
              id: row.id,
              address: row.address,
              subject: row.subject ?? "",
              body: claimedBody(row),
              attempt: row.attempts,
              subscriptionIds: subscriptionIdList(row.subscription_ids)
            }))
        )
      }),

    markSent: (claim) =>
      Effect.flatMap(now, (at) =>
        Effect.map(
          settle("markSent", claim, sql`
            UPDATE alerts.emails SET status = 'sent', claimed_until = NULL, sent_at = ${iso(at)}::timestamptz,
              updated_at = ${iso(at)}::timestamptz
            WHERE id = ${claim.id} AND status = 'sending' AND attempts = ${claim.attempt}
            RETURNING status`),
          Option.isSome
        )),

    markSentMany: (claims) =>
      claims.length === 0 ? Effect.succeed(0) : Effect.flatMap(now, (at) =>
        count("markSentMany", sql`
          WITH marked AS (
            UPDATE alerts.emails e SET status = 'sent', claimed_until = NULL, sent_at = ${iso(at)}::timestamptz,
              updated_at = ${iso(at)}::timestamptz
            FROM jsonb_to_recordset(${JSON.stringify(claims.map(({ attempt, id }) => ({ id, attempt })))}::jsonb)
              AS claim(id uuid, attempt integer)
            WHERE e.id = claim.id AND e.status = 'sending' AND e.attempts = claim.attempt
            RETURNING 1
          )
          SELECT count(*) AS count FROM marked`)),

    markTemporaryFailure: (claim, { maxAttempts, reason, retryAt }) =>
      Effect.flatMap(now, (at) =>
        Effect.map(
          settle("markTemporaryFailure", claim, sql`
            UPDATE alerts.emails
            SET status = CASE WHEN attempts >= ${maxAttempts} THEN 'failed' ELSE 'pending' END,
              next_attempt_at = CASE WHEN attempts >= ${maxAttempts} THEN next_attempt_at
                ELSE ${iso(retryAt)}::timestamptz END,
              claimed_until = NULL, failure_reason = ${reason}, updated_at = ${iso(at)}::timestamptz
            WHERE id = ${claim.id} AND status = 'sending' AND attempts = ${claim.attempt}
            RETURNING status`),
          Option.match({ onNone: () => "lost" as const, onSome: (s) => s === "failed" ? "failed" as const : "retrying" as const })
        )),

    markPermanentFailure: (claim, reason) =>
      Effect.flatMap(now, (at) =>
        Effect.map(
          settle("markPermanentFailure", claim, sql`
            UPDATE alerts.emails SET status = 'failed', claimed_until = NULL, failure_reason = ${reason},
              updated_at = ${iso(at)}::timestamptz
            WHERE id = ${claim.id} AND status = 'sending' AND attempts = ${claim.attempt}
            RETURNING status`),
          Option.isSome
        )),

    expireClaims: Effect.flatMap(now, (at) =>
      Effect.map(
        rows("expireClaims", Schema.Struct({ id: Schema.String }), sql`
          UPDATE alerts.emails SET claimed_until = ${iso(at)}::timestamptz, next_attempt_at = ${iso(at)}::timestamptz
          WHERE status = 'sending' AND next_attempt_at > ${iso(at)}::timestamptz
          RETURNING id`),
        (expired) => expired.length
      )),

    release: (claims) =>
      claims.length === 0 ? Effect.void : Effect.flatMap(now, (at) =>
        sql`
          UPDATE alerts.emails e
          SET status = 'pending', attempts = e.attempts - 1, next_attempt_at = ${iso(at)}::timestamptz,
            claimed_until = NULL, updated_at = ${iso(at)}::timestamptz
          FROM jsonb_to_recordset(${JSON.stringify(claims.map(({ attempt, id }) => ({ id, attempt })))}::jsonb)
            AS claim(id uuid, attempt integer)
          WHERE e.id = claim.id AND e.status = 'sending' AND e.attempts = claim.attempt`.pipe(
          Effect.asVoid,
          Effect.mapError(storeError("release"))
        )),

    figures: Effect.map(
      rows("figures", FiguresRow, sql`
        SELECT
          (SELECT count(*) FROM alerts.emails WHERE status IN ('pending', 'sending')) AS waiting,
          (SELECT min(created_at) FROM alerts.emails WHERE status = 'pending' AND digest_run_id IS NULL) AS oldest`),
      (found) => ({ waiting: found[0]?.waiting ?? 0, oldestImmediatePendingSince: found[0]?.oldest ?? null })
    ),

    statusFigures: Effect.map(
      rows("statusFigures", StatusFiguresRow, sql`
        SELECT
          count(*) FILTER (WHERE status = 'pending') AS pending,
          count(*) FILTER (WHERE status = 'sending') AS sending,
          count(*) FILTER (WHERE status = 'sent') AS sent,
          count(*) FILTER (WHERE status = 'failed') AS failed,
          min(created_at) FILTER (WHERE status = 'pending') AS oldest_pending
        FROM alerts.emails`),
      (found) => {
        const row = found[0]
        return {
          counts: { pending: row?.pending ?? 0, sending: row?.sending ?? 0, sent: row?.sent ?? 0, failed: row?.failed ?? 0 },
          oldestPendingSince: row?.oldest_pending ?? null
        }
      }
    ),

    prune: ({ blankBodiesAfter, deleteAfter }) =>
      Effect.gen(function*() {
        const at = yield* now
        const deleteBefore = iso(new Date(at.getTime() - Duration.toMillis(deleteAfter)))
        const blankBefore = iso(new Date(at.getTime() - Duration.toMillis(blankBodiesAfter)))
        let deleted = 0
        while (true) {
          const batch = yield* count("prune", sql`
            WITH gone AS (
              DELETE FROM alerts.emails WHERE id IN (
                SELECT id FROM alerts.emails
                WHERE status IN ('sent', 'failed') AND created_at < ${deleteBefore}::timestamptz
                LIMIT ${PRUNE_BATCH}
              )
              RETURNING id
            ),
            -- the links of emails written before migration 4 (no foreign key deletes them)
            unlinked AS (
              DELETE FROM alerts.email_subscriptions es USING gone WHERE es.email_id = gone.id
            )
            SELECT count(*) AS count FROM gone`)
          deleted += batch
          if (batch < PRUNE_BATCH) break
        }
        let blanked = 0
        while (true) {
          const batch = yield* count("prune", sql`
            WITH blanked AS (
              UPDATE alerts.emails SET body = NULL, unsubscribe_lines = NULL WHERE id IN (
                SELECT id FROM alerts.emails
                WHERE status IN ('sent', 'failed') AND created_at < ${blankBefore}::timestamptz
                  AND (body IS NOT NULL OR unsubscribe_lines IS NOT NULL)
                LIMIT ${PRUNE_BATCH}
              )
              RETURNING 1
            )
            SELECT count(*) AS count FROM blanked`)
          blanked += batch
          if (batch < PRUNE_BATCH) break
        }
        // a fan-out stores the content before it writes the emails that refer to it (see `fanned_out_at`)
        const contentsDeleted = yield* count("prune", sql`
          WITH gone AS (
            DELETE FROM alerts.notification_contents c
            WHERE c.fanned_out_at < ${blankBefore}::timestamptz
              AND NOT EXISTS (SELECT 1 FROM alerts.emails e WHERE e.notification_id = c.notification_id)
            RETURNING 1
          )
          SELECT count(*) AS count FROM gone`)
        return { blanked, deleted, contentsDeleted }
      }),

    startDigestRun: (window) =>
      Effect.gen(function*() {
        const at = yield* now
        yield* sql`
          INSERT INTO alerts.digest_runs (id, frequency, window_start, window_end, created_at)
          VALUES (${randomUUID()}, ${window.frequency}, ${iso(window.start)}::timestamptz, ${iso(window.end)}::timestamptz,
            ${iso(at)}::timestamptz)
          ON CONFLICT DO NOTHING`.pipe(Effect.mapError(storeError("startDigestRun")))
        const [run] = yield* digestRunByWindow(window)
        return run === undefined ? yield* storeError("startDigestRun")("no run recorded") : toDigestRun(run)
      }),

    completeDigestRun: (id) =>
      Effect.flatMap(now, (at) =>
        sql`UPDATE alerts.digest_runs SET completed_at = ${iso(at)}::timestamptz WHERE id = ${id} AND completed_at IS NULL`
          .pipe(Effect.asVoid, Effect.mapError(storeError("completeDigestRun")))),

    digestRunsToResume: (frequency) =>
      Effect.map(
        rows("digestRunsToResume", DigestRunRow, sql`
          SELECT id, frequency, window_start, window_end, completed_at FROM alerts.digest_runs
          WHERE frequency = ${frequency} AND (completed_at IS NULL
            OR window_end = (SELECT max(window_end) FROM alerts.digest_runs WHERE frequency = ${frequency}))
          ORDER BY window_end`),
        (found) => found.map(toDigestRun)
      ),

    notificationsIn: ({ end, start }) =>
      Effect.map(
        rows("notificationsIn", NotificationRow, sql`
          SELECT ${notificationColumns} FROM alerts.notifications n
          WHERE n.created_at >= ${iso(start)}::timestamptz AND n.created_at < ${iso(end)}::timestamptz
          ORDER BY n.created_at, n.id`),
        (found) => found.map(toNotification)
      ),

    digestEntries: ({ end, frequency, start }, { afterSubscriberId, throughSubscriberId }) =>
      Effect.map(
        rows("digestEntries", DigestEntryRow, sql`
          SELECT s.subscriber_id, subscriber.address, s.id AS subscription_id, l.title AS list_title,
            n.id AS notification_id
          FROM alerts.notifications n
          JOIN alerts.notification_matches m ON m.notification_id = n.id
          JOIN alerts.subscriptions s ON s.subscriber_list_id = m.subscriber_list_id
          JOIN alerts.subscriber_lists l ON l.id = s.subscriber_list_id
          JOIN alerts.subscribers subscriber ON subscriber.id = s.subscriber_id
          WHERE n.created_at >= ${iso(start)}::timestamptz AND n.created_at < ${iso(end)}::timestamptz
            AND s.ended_at IS NULL AND s.frequency = ${frequency} AND subscriber.deactivated_at IS NULL
            AND s.subscriber_id > ${afterSubscriberId} AND s.subscriber_id <= ${throughSubscriberId}`),
        (found) =>
          found.map((row) => ({
            subscriberId: row.subscriber_id,
            address: row.address,
            subscriptionId: row.subscription_id,
            listTitle: row.list_title,
            notificationId: row.notification_id
          }))
      ),

    insertDigestEmails: (runId, digests) =>
      digests.length === 0 ? Effect.succeed(0) : Effect.flatMap(now, (at) =>
        count("insertDigestEmails", sql`
          WITH given AS (
            SELECT * FROM jsonb_to_recordset(${JSON.stringify(digests)}::jsonb)
              AS given("subscriberId" bigint, address text, subject text, body text, "subscriptionIds" jsonb)
          ),
          inserted AS (
            INSERT INTO alerts.emails (id, address, subject, body, status, attempts, next_attempt_at, digest_run_id,
              subscriber_id, subscription_ids, created_at, updated_at)
            SELECT gen_random_uuid(), given.address, given.subject, given.body, 'pending', 0, ${iso(at)}::timestamptz,
              ${runId}, given."subscriberId",
              (SELECT COALESCE(string_agg(subscription.id::uuid::text, ',' ORDER BY subscription.id::uuid), '')
                FROM jsonb_array_elements_text(given."subscriptionIds") AS subscription(id)),
              ${iso(at)}::timestamptz, ${iso(at)}::timestamptz
            FROM given
            ON CONFLICT DO NOTHING
            RETURNING 1
          )
          SELECT count(*) AS count FROM inserted`)),

    emailsOfDigestRun: (runId) =>
      isUuid(runId)
        ? Effect.map(
          rows("emailsOfDigestRun", EmailRow, sql`
            SELECT ${emailColumns} FROM ${emailsWithContent} WHERE e.digest_run_id = ${runId} ORDER BY e.subscriber_id`),
          (found) => found.map(toStoredEmail)
        )
        : Effect.succeed([]),

    email: (id) =>
      isUuid(id)
        ? Effect.map(
          rows("email", EmailRow, sql`SELECT ${emailColumns} FROM ${emailsWithContent} WHERE e.id = ${id}`),
          (found) => Option.map(Option.fromNullable(found[0]), toStoredEmail)
        )
        : Effect.succeed(Option.none()),

    emailsOfNotification: (notificationId) =>
      isUuid(notificationId)
        ? Effect.map(
          rows("emailsOfNotification", EmailRow, sql`
            SELECT ${emailColumns} FROM ${emailsWithContent}
            WHERE e.notification_id = ${notificationId} ORDER BY e.subscriber_id`),
          (found) => found.map(toStoredEmail)
        )
        : Effect.succeed([]),

    ...deliveryReportStatements(tools)
  }
  return store
})

/** Emails over the host's `SqlClient` (PostgreSQL, or PGlite embedded); run `migrate` first. */
export const emailsSql: Layer.Layer<EmailStore, never, SqlClient> = Layer.effect(EmailStore, makeSqlEmailStore)
