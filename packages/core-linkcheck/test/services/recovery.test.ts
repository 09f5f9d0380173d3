import { it } from "@effect/vitest"
import { Duration, Effect, Fiber, Layer, TestClock } from "effect"
import { afterAll, beforeAll, describe, expect } from "vitest"
import { LinkChecker } from "../../src/services/LinkChecker"
import { deleteOldChecks } from "../../src/services/cleanup"
import { LinkcheckStore } from "../../src/storage/LinkcheckStore"
import { layerMemory } from "../../src/storage/memory"
import { startFixtureFleet } from "../fixtures/fleet"
import type { FixtureFleet } from "../fixtures/fleet"
import { startWebhookReceiver } from "../fixtures/webhookReceiver"
import { createTestDatabase, postgresBackend, sharedPglite } from "../storage/backends"
import { claimEverything, linkcheckWithoutWorkers, runningLinkcheck } from "./harness"
import { deliverWebhook } from "../../src/services/webhookDelivery"

let fleet: FixtureFleet
const pglite = sharedPglite()
beforeAll(async () => {
  fleet = await startFixtureFleet()
  await pglite.open()
}, 120_000)
afterAll(async () => {
  await fleet?.close()
  await pglite.close()
})

const realPause = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))

/**
 * Polls with real pauses while moving the TestClock on a little each round, so that the workers' own short pauses
 * between claims pass too.
 */
const waitUntil = <A>(read: Effect.Effect<A, unknown, LinkChecker | LinkcheckStore>, done: (a: A) => boolean) =>
  Effect.gen(function*() {
    for (let round = 0; round < 400; round++) {
      const value = yield* read
      if (done(value)) return value
      yield* realPause(25)
      yield* TestClock.adjust("100 millis")
    }
    return yield* Effect.dieMessage("condition not reached in 10 s")
  })

const backends = [
  ["PGlite", () => pglite.backend()] as const,
  ...(process.env.TEST_DATABASE_URL === undefined ? [] : [["PostgreSQL", "postgres"] as const])
]

describe.each(backends)("recovery on %s", (backendName, backend) => {
  let store: () => Layer.Layer<LinkcheckStore, unknown>
  let drop: (() => Promise<unknown>) | undefined
  beforeAll(async () => {
    if (backend === "postgres") {
      const database = await createTestDatabase(process.env.TEST_DATABASE_URL!)
      drop = database.drop
      store = () => postgresBackend(database.url)
    } else {
      store = backend
    }
  })
  afterAll(() => drop?.())

  it.effect("checks claimed by a worker that died are checked by another once its claims expire", () =>
    Effect.gen(function*() {
      const storeService = yield* LinkcheckStore
      const sameStore = Layer.succeed(LinkcheckStore, storeService)
      const uris = Array.from({ length: 12 }, (_, n) => `${fleet.http}/ok?orphan=${n}&on=${backendName}`)
      // Before any live worker runs: the batch is created and a worker that then dies claims all of its checks.
      const created = yield* Effect.flatMap(LinkChecker, (linkChecker) =>
        linkChecker.createBatch({ uris, checkedWithin: 0, priority: "high" })).pipe(
          Effect.provide(linkcheckWithoutWorkers(fleet, sameStore))
        )
      const now = new Date(yield* TestClock.currentTimeMillis)
      const orphaned = yield* storeService.claimChecks({
        workerId: "worker-that-died",
        now,
        claimUntil: new Date(now.getTime() + Duration.toMillis("5 minutes")),
        limit: 100,
        perHost: 100,
        workersAliveSince: now,
        aheadPerHost: 0,
        heldByHost: new Map(),
        lowPriorityQuota: 0
      })
      expect(orphaned).toHaveLength(12)

      yield* Effect.gen(function*() {
        const linkChecker = yield* LinkChecker
        yield* realPause(300)
        expect((yield* linkChecker.getBatch(created.batch.id)).totals.pending).toBe(12)
        expect(fleet.requestCount(`/ok?orphan=0&on=${backendName}`)).toBe(0)

        yield* TestClock.adjust("6 minutes")
        const report = yield* waitUntil(linkChecker.getBatch(created.batch.id), (r) => r.completedAt !== null)
        expect(report.totals).toMatchObject({ links: 12, ok: 12, pending: 0 })
      }).pipe(
        Effect.scoped,
        Effect.provide(runningLinkcheck(fleet, sameStore, { scheduler: { perHostInterval: 0, pollInterval: "1 minute" } }))
      )
    }).pipe(Effect.provide(Layer.unwrapEffect(Effect.sync(() => store())))), { timeout: 120_000 })
})

describe("claims", () => {
  it.effect("a check run inside a request keeps its claim while it runs, however long; a dead holder's claim is free within 30 s", () =>
    Effect.gen(function*() {
      const linkChecker = yield* LinkChecker
      const inRequest = yield* Effect.fork(linkChecker.check({ uri: `${fleet.silent}/never`, checkedWithin: 0, synchronous: true }))
      yield* realPause(200)
      for (let step = 0; step < 6; step++) {
        yield* TestClock.adjust("10 seconds")
        yield* realPause(20)
      }
      expect(yield* claimEverything("another-worker")).toHaveLength(0)

      // The request's process dies: nothing renews the claim any more.
      yield* Fiber.interrupt(inRequest)
      yield* TestClock.adjust("31 seconds")
      expect((yield* claimEverything("another-worker")).map((check) => check.uri)).toEqual([`${fleet.silent}/never`])
    }).pipe(Effect.provide(linkcheckWithoutWorkers(fleet, layerMemory, { inspector: { responseTimeout: "10 minutes" } }))))
})

describe("webhook delivery", () => {
  /** A batch with a webhook to a receiver answering `statuses`, and its delivery by the service's own sender. */
  const deliverTo = (statuses: ReadonlyArray<number>) =>
    Effect.gen(function*() {
      const receiver = yield* Effect.acquireRelease(
        Effect.promise(() => startWebhookReceiver(statuses)),
        (r) => Effect.promise(r.close)
      )
      const linkChecker = yield* LinkChecker
      const created = yield* linkChecker.createBatch({
        uris: ["mailto:someone@example.org"],
        checkedWithin: 0,
        webhook: { uri: receiver.url, secretToken: null }
      })
      return { receiver, deliver: deliverWebhook(created.batch.id), batchId: created.batch.id }
    })

  const webhookAttempts = (batchId: number) => Effect.flatMap(LinkcheckStore, (store) => store.webhookAttempts(batchId))

  it.scoped("fails on 5xx and 429 so the queue retries, records every attempt, and stops on success", () =>
    Effect.gen(function*() {
      const { batchId, deliver, receiver } = yield* deliverTo([500, 429])
      expect((yield* Effect.flip(deliver))._tag).toBe("WebhookNotDelivered")
      expect((yield* Effect.flip(deliver))._tag).toBe("WebhookNotDelivered")
      yield* deliver
      expect(receiver.received).toHaveLength(3)
      expect((yield* webhookAttempts(batchId)).map((attempt) => attempt.statusCode)).toEqual([500, 429, 200])
    }).pipe(Effect.provide(linkcheckWithoutWorkers(fleet, layerMemory))))

  it.scoped("a delivery run again after the receiver took the webhook sends nothing", () =>
    Effect.gen(function*() {
      const { batchId, deliver, receiver } = yield* deliverTo([200])
      yield* deliver
      yield* deliver
      expect(receiver.received).toHaveLength(1)
      expect((yield* webhookAttempts(batchId)).map((attempt) => [attempt.statusCode, attempt.final])).toEqual([[200, true]])
    }).pipe(Effect.provide(linkcheckWithoutWorkers(fleet, layerMemory))))

  it.scoped("gives up without retrying when the receiver refuses with a 4xx", () =>
    Effect.gen(function*() {
      const { batchId, deliver } = yield* deliverTo([404])
      yield* deliver
      expect((yield* webhookAttempts(batchId)).map((attempt) => attempt.statusCode)).toEqual([404])
    }).pipe(Effect.provide(linkcheckWithoutWorkers(fleet, layerMemory))))

  it.scoped("does not send the webhook to a private address unless allowed, and records the refusal once, as final", () =>
    Effect.gen(function*() {
      const { batchId, deliver, receiver } = yield* deliverTo([])
      yield* deliver
      yield* deliver
      expect(receiver.received).toHaveLength(0)
      const attempts = yield* webhookAttempts(batchId)
      expect(attempts.map((attempt) => [attempt.statusCode, attempt.final])).toEqual([[null, true]])
      expect(attempts[0]?.error).toContain("non-public")
    }).pipe(Effect.provide(linkcheckWithoutWorkers(fleet, layerMemory, { allowPrivateAddresses: false }))))
})

describe("cleanup", () => {
  it.effect("deletes checks completed over the retention ago, with their batches, and keeps newer ones", () =>
    Effect.gen(function*() {
      const linkChecker = yield* LinkChecker
      yield* TestClock.adjust("1 day")
      const old = yield* linkChecker.check({ uri: "mailto:old@example.org", checkedWithin: 0, synchronous: true })
      const oldBatch = yield* linkChecker.createBatch({ uris: ["mailto:old@example.org"], checkedWithin: "4 hours", priority: "high" })
      yield* TestClock.adjust("29 days")
      yield* linkChecker.check({ uri: "mailto:new@example.org", checkedWithin: 0, synchronous: true })
      yield* deleteOldChecks(Duration.toSeconds("28 days"))
      const oldAgain = yield* linkChecker.check({ uri: old.uri, checkedWithin: "100 days", synchronous: false })
      expect(oldAgain.status).toBe("pending")
      const fresh = yield* linkChecker.check({ uri: "mailto:new@example.org", checkedWithin: "1 day", synchronous: false })
      expect(fresh.status).toBe("caution")
      const gone = yield* Effect.flip(linkChecker.getBatch(oldBatch.batch.id))
      expect(gone._tag).toBe("BatchNotFound")
    }).pipe(Effect.provide(Layer.unwrapEffect(Effect.sync(() => linkcheckWithoutWorkers(fleet, layerMemory))))))
})
