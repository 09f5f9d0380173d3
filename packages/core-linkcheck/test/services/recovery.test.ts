import { it } from "@effect/vitest"
import { Duration, Effect, Fiber, Layer, TestClock } from "effect"
import { afterAll, beforeAll, describe, expect } from "vitest"
import { createTestDatabase, sharedPglite } from "@civicstack/kit/testing"
import { migrate } from "../../src/migrations/index"
import { LinkChecker } from "../../src/services/LinkChecker"
import { LinkcheckStore } from "../../src/storage/LinkcheckStore"
import { layerMemory } from "../../src/storage/memory"
import { startFixtureFleet } from "../fixtures/fleet"
import type { FixtureFleet } from "../fixtures/fleet"
import { claimEverything, linkcheckWithoutWorkers, runningLinkcheck } from "../fixtures/service"
import { pgliteBackend, postgresBackend } from "../storage/backends"

let fleet: FixtureFleet
const pglite = sharedPglite(migrate)
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
  ["PGlite", () => pgliteBackend(pglite.database)] as const,
  ...(process.env.TEST_DATABASE_URL === undefined ? [] : [["PostgreSQL", "postgres"] as const])
]

describe.each(backends)("recovery on %s", (backendName, backend) => {
  let store: () => Layer.Layer<LinkcheckStore, unknown>
  let drop: (() => Promise<unknown>) | undefined
  beforeAll(async () => {
    if (backend === "postgres") {
      const database = await createTestDatabase(process.env.TEST_DATABASE_URL!, "lcstore", migrate)
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
        expect((yield* linkChecker.getBatch(created.batch.id, "every batch")).totals.pending).toBe(12)
        expect(fleet.requestCount(`/ok?orphan=0&on=${backendName}`)).toBe(0)

        yield* TestClock.adjust("6 minutes")
        const report = yield* waitUntil(linkChecker.getBatch(created.batch.id, "every batch"), (r) => r.completedAt !== null)
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
    }).pipe(Effect.provide(linkcheckWithoutWorkers(fleet, layerMemory(), { inspector: { responseTimeout: "10 minutes", checkTimeout: "20 minutes" } }))))
})
