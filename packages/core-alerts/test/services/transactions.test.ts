import { JobQueue, JobQueueError, layerSql as jobQueueSql } from "@civicstack/jobs"
import { sharedPglite } from "@civicstack/kit/testing"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql/SqlClient"
import { Duration, Effect, Exit, Layer, Option, Redacted, Schema } from "effect"
import { EmailQueue } from "../../src/services/EmailQueue"
import { fanOutJob } from "../../src/domain/jobs"
import { serviceWithQueue } from "../../src/layers"
import { Alerts } from "../../src/services/Alerts"
import { AlertsParts } from "../../src/services/AlertsParts"
import { StoreError } from "@civicstack/kit"
import { layerSql as storesSql } from "../../src/storage/sql"
import { keyedRecord } from "../../src/api/criteria"
import { listCriteriaFromWire, notificationFromWire } from "../../src/http/wire"
import { CreateNotificationBody } from "../../src/api/requests"
import { emptyAllTables, migrateAll } from "../fixtures/backends"

const pglite = sharedPglite(migrateAll)
beforeAll(pglite.open)
afterAll(pglite.close)

/** Switches that make the next enqueue or email fail, after the real enqueue ran on the transaction's connection. */
const failures = { enqueue: false, email: false }

const failingJobQueue = Layer.effect(
  JobQueue,
  Effect.map(JobQueue, (jobs) => ({
    ...jobs,
    enqueue: (definition, payload, options) =>
      Effect.tap(
        jobs.enqueue(definition, payload, options),
        () => failures.enqueue ? Effect.fail(new JobQueueError({ message: "enqueue failed (test)" })) : Effect.void
      )
  }) satisfies typeof jobs)
).pipe(Layer.provide(jobQueueSql()))

const failingEmailQueue = Layer.succeed(EmailQueue, {
  queue: () => (failures.email ? Effect.fail(new StoreError({ message: "email queue failed (test)" })) : Effect.void),
  queuedSince: () => Effect.succeed({ count: 0, oldest: null }),
  figures: Effect.succeed({ size: 0, oldestImmediatePendingSince: null })
})

/** With the job queue on the same database, as the reference server has it: a notification and its job in one statement. */
const service = serviceWithQueue({ authTokenSecret: Redacted.make("x".repeat(40)) }).pipe(
  Layer.provide(Layer.mergeAll(
    storesSql({ jobQueueInSameDatabase: true }),
    failingJobQueue,
    failingEmailQueue
  )),
  Layer.provide(emptyAllTables),
  Layer.provide(pglite.database)
)

/** Without it: the service writes them in a transaction. */
const serviceOverTransaction = serviceWithQueue({ authTokenSecret: Redacted.make("x".repeat(40)) }).pipe(
  Layer.provide(Layer.mergeAll(storesSql(), failingJobQueue, failingEmailQueue)),
  Layer.provide(emptyAllTables),
  Layer.provide(pglite.database)
)

const change = notificationFromWire(Schema.decodeUnknownSync(CreateNotificationBody)({
  title: "A change",
  content_id: "c-1",
  base_path: "/guide",
  public_updated_at: "2026-03-01T10:00:00Z"
}))

/**
 * After a failed first attempt: the change is recorded now with its fan-out job, and a third attempt is a duplicate.
 * Had the first been recorded, the second would already be the duplicate.
 */
const recordedOnlyNow = Effect.gen(function*() {
  const alerts = yield* Alerts
  const { jobs } = yield* AlertsParts
  const recorded = yield* alerts.queueNotification(change)
  const [claimed] = yield* jobs.claim({ queue: fanOutJob.queue, workerId: "test", limit: 10, leaseDuration: Duration.minutes(1) })
  expect(claimed?.payload).toEqual({ notificationId: recorded.id })
  const again = yield* Effect.flip(alerts.queueNotification(change))
  expect(again._tag).toBe("ContentChangeAlreadyReceived")
})

describe("what the service does in one transaction (PGlite)", () => {
  it.effect("a notification whose fan-out job cannot be written by its statement is not recorded either", () =>
    Effect.gen(function*() {
      const alerts = yield* Alerts
      const { jobs } = yield* AlertsParts
      const sql = yield* SqlClient
      yield* sql.unsafe(`ALTER TABLE jobs.jobs ADD CONSTRAINT no_fan_out_jobs CHECK (queue <> '${fanOutJob.queue}') NOT VALID`)
      const failed = yield* Effect.exit(alerts.queueNotification(change))
      yield* sql`ALTER TABLE jobs.jobs DROP CONSTRAINT no_fan_out_jobs`
      expect(Exit.isFailure(failed)).toBe(true)
      expect(yield* jobs.stats).toEqual([])

      yield* recordedOnlyNow
      expect((yield* jobs.stats).map((stats) => stats.queued + stats.running)).toEqual([1])
    }).pipe(Effect.provide(Layer.merge(service, pglite.database))))

  it.effect("over a store without the one statement, a notification whose fan-out job cannot be enqueued is not recorded either", () =>
    Effect.gen(function*() {
      const alerts = yield* Alerts
      const { jobs } = yield* AlertsParts
      failures.enqueue = true
      const failed = yield* Effect.exit(alerts.queueNotification(change))
      failures.enqueue = false
      expect(Exit.isFailure(failed)).toBe(true)
      expect(yield* jobs.stats).toEqual([])

      yield* recordedOnlyNow
    }).pipe(Effect.provide(serviceOverTransaction)))

  it.effect("an auth token whose email cannot be queued does not reactivate the subscriber", () =>
    Effect.gen(function*() {
      const alerts = yield* Alerts
      const { store } = yield* AlertsParts
      const list = yield* alerts.findOrCreateList({
        title: "Guides",
        criteria: listCriteriaFromWire({ tags: keyedRecord([["format", ["guide"]]]) })
      })
      const { value: subscription } = yield* alerts.subscribe({
        address: "ann@example.org",
        subscriberListId: list.value.id,
        frequency: "immediately"
      })
      yield* alerts.deactivateSubscriber(subscription.subscriberId)

      failures.email = true
      const failed = yield* Effect.exit(alerts.sendAuthToken({ address: "ann@example.org", destination: "/manage", caller: "public-site" }))
      failures.email = false
      expect(Exit.isFailure(failed)).toBe(true)
      const subscriber = Option.getOrThrow(yield* store.subscriberById(subscription.subscriberId))
      expect(subscriber.deactivatedAt).not.toBeNull()

      const sent = yield* alerts.sendAuthToken({ address: "ann@example.org", destination: "/manage", caller: "public-site" })
      expect(sent.deactivatedAt).toBeNull()
    }).pipe(Effect.provide(service)))

  it.effect("ids and slugs no record can have name nothing and never reach the database", () =>
    Effect.gen(function*() {
      const alerts = yield* Alerts
      const tags = (effect: Effect.Effect<unknown, { readonly _tag: string }>) => Effect.map(Effect.flip(effect), (e) => e._tag)
      expect(yield* tags(alerts.subscriptionsOf(2 ** 60))).toBe("SubscriberNotFound")
      expect(yield* tags(alerts.subscriptionsOf(0))).toBe("SubscriberNotFound")
      expect(yield* tags(alerts.deactivateSubscriber(1.5))).toBe("SubscriberNotFound")
      expect(yield* tags(alerts.changeAddress(-1, "a@example.org"))).toBe("SubscriberNotFound")
      expect(yield* tags(alerts.subscribe({ address: "a@example.org", subscriberListId: 1e30, frequency: "daily" })))
        .toBe("SubscriberListNotFound")
      expect(yield* tags(alerts.listBySlug("a\u0000b"))).toBe("SubscriberListNotFound")
      expect(yield* tags(alerts.listBySlug("x".repeat(300)))).toBe("SubscriberListNotFound")
      expect(yield* tags(alerts.subscription("not-a-uuid"))).toBe("SubscriptionNotFound")
    }).pipe(Effect.provide(service)))
})
