import { it } from "@effect/vitest"
import { Context, Effect, Exit, Fiber, Layer, Ref, Schema, Scope } from "effect"
import { createHmac } from "node:crypto"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect } from "vitest"
import { BatchReport } from "../../src/api/reports"
import { processSpace, runScheduler } from "../../src/workers/scheduler"
import { batchToWire } from "../../src/http/wire"
import { EARLY_START_LINKS, LinkChecker } from "../../src/services/LinkChecker"
import { LinkcheckStore } from "../../src/storage/LinkcheckStore"
import { layerMemory } from "../../src/storage/memory"
import { startFixtureFleet } from "../fixtures/fleet"
import type { FixtureFleet } from "../fixtures/fleet"
import { startWebhookReceiver } from "../fixtures/webhookReceiver"
import { claimEverything, completedBatch, linkcheckWithoutWorkers, runningLinkcheck } from "../fixtures/service"

let fleet: FixtureFleet
beforeAll(async () => {
  fleet = await startFixtureFleet()
})
afterAll(() => fleet?.close())

const claims = Ref.unsafeMake(0)
/** The memory store, counting the scheduler's claims. */
const countingClaims = Layer.effect(
  LinkcheckStore,
  Effect.map(LinkcheckStore, (store) => ({
    ...store,
    claimChecks: (request: Parameters<typeof store.claimChecks>[0]) =>
      Effect.zipRight(Ref.update(claims, (count) => count + 1), store.claimChecks(request))
  }))
).pipe(Layer.provide(layerMemory()))

describe("batches through the service", () => {
  it.live("a batch of 5000 uris over 50 hosts completes and fires exactly one correctly signed webhook", () =>
    Effect.gen(function*() {
      const receiver = yield* Effect.acquireRelease(Effect.promise(() => startWebhookReceiver()), (r) => Effect.promise(r.close))
      const uris = Array.from({ length: 5000 }, (_, n) =>
        n % 100 === 7 ? `http://site${n % 50}.test:${fleet.httpPort}/status/404?n=${n}` : `http://site${n % 50}.test:${fleet.httpPort}/ok?n=${n}`)
      const linkChecker = yield* LinkChecker
      const created = yield* linkChecker.createBatch({
        uris,
        checkedWithin: "4 hours",
        priority: "high",
        webhook: { uri: receiver.url, secretToken: "s3cret" }
      })
      expect(created.completedAtOnce).toBe(false)
      const report = yield* completedBatch(created.batch.id)
      expect(report.totals).toEqual({ links: 5000, ok: 4950, caution: 0, broken: 50, pending: 0, danger: 0 })
      expect(report.links.map((link) => link.uri)).toEqual(uris)

      yield* Effect.promise(() => receiver.waitFor(1))
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 500)))
      expect(receiver.received).toHaveLength(1)
      const [webhook] = receiver.received
      const expected = createHmac("sha1", "s3cret").update(webhook!.body).digest("hex")
      expect(webhook!.headers["x-linkcheckerapi-signature"]).toBe(expected)
      expect(JSON.parse(webhook!.body.toString("utf8"))).toEqual(Schema.encodeSync(BatchReport)(batchToWire(report)))
      const attempts = yield* Effect.flatMap(LinkcheckStore, (store) => store.webhookAttempts(created.batch.id))
      expect(attempts.map((attempt) => attempt.statusCode)).toEqual([200])
    }).pipe(Effect.scoped, Effect.provide(runningLinkcheck(fleet, layerMemory()))), { timeout: 120_000 })

  // thousands claimed ahead, each its own site, and few slots: each check that ends frees the slot of the next
  it.live("a batch of 5000 links that need no request, each ending as it starts, completes", () =>
    Effect.gen(function*() {
      const uris = Array.from({ length: 5000 }, (_, n) => `http://10.${n >> 8}.${n & 255}.1/report.pdf`)
      const created = yield* Effect.flatMap(LinkChecker, (linkChecker) =>
        linkChecker.createBatch({ uris, checkedWithin: "4 hours", priority: "high" }))
      const report = yield* completedBatch(created.batch.id)
      expect(report.totals).toEqual({ links: 5000, ok: 0, caution: 0, broken: 5000, pending: 0, danger: 0 })
    }).pipe(
      Effect.provide(runningLinkcheck(fleet, layerMemory(), {
        allowPrivateAddresses: false,
        concurrency: 8,
        scheduler: { prefetch: 5000 }
      }))
    ), { timeout: 60_000 })

  it.live("a large batch's first links are being checked before the batch is written, each uri checked once", () => {
    const uris = Array.from(
      { length: EARLY_START_LINKS + 44 },
      (_, n) => `http://early${n % 10}.test:${fleet.httpPort}/ok?early=${n}`
    )
    const firstLinkRequested = Effect.gen(function*() {
      for (let waited = 0; fleet.requestCount("/ok?early=0") === 0; waited += 10) {
        if (waited > 10_000) return yield* Effect.dieMessage("the batch was written before its first link was checked")
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
      }
    })
    // the batch is written in a transaction, which begins only once the fleet has seen the batch's first link
    const storeWaitingForFirstRequest = Layer.effect(
      LinkcheckStore,
      Effect.map(LinkcheckStore, (store): Context.Tag.Service<LinkcheckStore> => ({
        ...store,
        transaction: (effect) => Effect.zipRight(firstLinkRequested, store.transaction(effect))
      }))
    ).pipe(Layer.provide(layerMemory()))
    return Effect.gen(function*() {
      const linkChecker = yield* LinkChecker
      const created = yield* linkChecker.createBatch({ uris, checkedWithin: 0, priority: "high" })
      const report = yield* completedBatch(created.batch.id)
      expect(report.totals).toMatchObject({ links: uris.length, ok: uris.length })
      expect(uris.filter((uri) => fleet.requestCount(new URL(uri).pathname + new URL(uri).search) !== 1)).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(runningLinkcheck(fleet, storeWaitingForFirstRequest)))
  }, { timeout: 60_000 })

  it.live("a batch's checks are claimed for the running scheduler as they are written, first links and the rest", () => {
    const claimedAfterwards: Array<string> = []
    const claimedAsWritten: Array<string> = []
    const recordingClaims = Layer.effect(
      LinkcheckStore,
      Effect.map(LinkcheckStore, (store): Context.Tag.Service<LinkcheckStore> => ({
        ...store,
        claimChecks: (request) =>
          Effect.tap(store.claimChecks(request), (claimed) => claimedAfterwards.push(...claimed.map((check) => check.uri))),
        createAndClaimChecks: (input) =>
          Effect.tap(store.createAndClaimChecks(input), ({ claimed }) =>
            claimedAsWritten.push(...claimed.map((check) => check.uri))),
        createAndClaimBatch: (input) =>
          Effect.tap(store.createAndClaimBatch(input), ({ claimed }) =>
            claimedAsWritten.push(...claimed.map((check) => check.uri)))
      }))
    ).pipe(Layer.provide(layerMemory()))
    // 30 links on each of 20 hosts, within what a host may have claimed (its limit and as many ahead)
    const uris = Array.from({ length: 600 }, (_, n) => `http://many${n % 20}.test:${fleet.httpPort}/slow?ms=100&written=${n}`)
    return Effect.gen(function*() {
      const linkChecker = yield* LinkChecker
      // once a first batch is done, the scheduler runs
      yield* completedBatch((yield* linkChecker.createBatch({ uris: [`${fleet.http}/ok?warm-up`] })).batch.id)
      claimedAsWritten.length = 0
      claimedAfterwards.length = 0
      const created = yield* linkChecker.createBatch({ uris, checkedWithin: 0, priority: "high" })
      const report = yield* completedBatch(created.batch.id)
      expect(report.totals).toMatchObject({ links: 600, ok: 600 })
      expect(claimedAsWritten).toEqual(uris)
      expect(claimedAfterwards).toEqual([])
      for (let host = 0; host < 20; host++) {
        expect(fleet.peakConcurrentRequests(`many${host}.test:${fleet.httpPort}`)).toBeLessThanOrEqual(20)
      }
    }).pipe(
      Effect.scoped,
      Effect.provide(runningLinkcheck(fleet, recordingClaims, { concurrency: 1000, perHostConcurrency: 20 }))
    )
  }, { timeout: 60_000 })

  it.live("a check run inside a request that finishes a batch's last link completes the batch and sends its webhook", () =>
    Effect.gen(function*() {
      const receiver = yield* Effect.acquireRelease(Effect.promise(() => startWebhookReceiver()), (r) => Effect.promise(r.close))
      const linkChecker = yield* LinkChecker
      const uri = `${fleet.http}/slow?ms=600&lost-webhook=1`
      const inRequest = yield* Effect.fork(linkChecker.check({ uri, checkedWithin: 0, synchronous: true }))
      while (fleet.requestCount("/slow?ms=600&lost-webhook=1") === 0) {
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
      }
      // The batch reuses the check the request is running; no worker may start it, so only the request completes it.
      const created = yield* linkChecker.createBatch({
        uris: [uri],
        checkedWithin: "1 hour",
        webhook: { uri: receiver.url, secretToken: null }
      })
      expect(created.completedAtOnce).toBe(false)
      expect((yield* Fiber.join(inRequest)).status).toBe("ok")

      expect((yield* linkChecker.getBatch(created.batch.id, "every batch")).completedAt).not.toBeNull()
      yield* Effect.promise(() => receiver.waitFor(1))
      expect(fleet.requestCount("/slow?ms=600&lost-webhook=1")).toBe(1)
      const delivered = JSON.parse(receiver.received[0]!.body.toString("utf8"))
      expect(delivered).toMatchObject({ id: created.batch.id, status: "completed", totals: { links: 1, ok: 1 } })
    }).pipe(Effect.scoped, Effect.provide(runningLinkcheck(fleet, layerMemory()))))

  it.live("once every check of a batch is claimed, the slots its checks free do not send the scheduler back to claim", () =>
    Effect.gen(function*() {
      const linkChecker = yield* LinkChecker
      // one page a host, ending 40 ms apart: each end frees a slot with nothing left to claim
      const uris = Array.from({ length: 20 }, (_, n) => `http://tail${n}.test:${fleet.httpPort}/slow?ms=${40 * (n + 1)}&tail`)
      const { batch } = yield* linkChecker.createBatch({ uris, checkedWithin: 0 })
      yield* completedBatch(batch.id)
      expect(yield* Ref.get(claims)).toBeLessThanOrEqual(3)
    }).pipe(Effect.provide(runningLinkcheck(fleet, countingClaims, { scheduler: { pollInterval: "1 minute" } }))))

  it.live("a scheduler given a count that is not a finite number stops at once with a defect naming it", () =>
    Effect.gen(function*() {
      const defect = yield* runScheduler({ perHostConcurrency: Number.POSITIVE_INFINITY }).pipe(
        Effect.catchAllDefect(Effect.succeed)
      )
      expect(String(defect)).toContain("runScheduler: perHostConcurrency must be a finite number (got Infinity)")
    }).pipe(Effect.provide(linkcheckWithoutWorkers(fleet, layerMemory()))))

  it.live("a batch whose links all have results is completed at once and still sends its webhook", () =>
    Effect.gen(function*() {
      const receiver = yield* Effect.acquireRelease(Effect.promise(() => startWebhookReceiver()), (r) => Effect.promise(r.close))
      const linkChecker = yield* LinkChecker
      const uris = [`${fleet.http}/ok?again=1`, `${fleet.http}/status/410?again=1`]
      const first = yield* linkChecker.createBatch({ uris, checkedWithin: "4 hours", priority: "high" })
      yield* completedBatch(first.batch.id)
      const second = yield* linkChecker.createBatch({ uris, checkedWithin: "4 hours", priority: "low", webhook: { uri: receiver.url, secretToken: null } })
      expect(second.completedAtOnce).toBe(true)
      expect(second.batch.completedAt).not.toBeNull()
      expect(fleet.requestCount("/ok?again=1")).toBe(1)
      yield* Effect.promise(() => receiver.waitFor(1))
      expect(receiver.received[0]!.headers["x-linkcheckerapi-signature"]).toBeUndefined()
    }).pipe(Effect.scoped, Effect.provide(runningLinkcheck(fleet, layerMemory()))))

  it.live("high priority links are checked before low ones, and low ones still progress", () =>
    Effect.gen(function*() {
      const linkChecker = yield* LinkChecker
      const low = yield* linkChecker.createBatch({
        uris: Array.from({ length: 60 }, (_, n) => `${fleet.http}/slow?ms=20&low=${n}`),
        checkedWithin: 0,
        priority: "low"
      })
      const high = yield* linkChecker.createBatch({
        uris: Array.from({ length: 60 }, (_, n) => `${fleet.http}/slow?ms=20&high=${n}`),
        checkedWithin: 0,
        priority: "high"
      })
      const highDone = yield* completedBatch(high.batch.id)
      const lowAtThatTime = yield* linkChecker.getBatch(low.batch.id, "every batch")
      expect(highDone.totals.ok).toBe(60)
      expect(lowAtThatTime.totals.pending).toBeGreaterThan(0)
      const lowDone = yield* completedBatch(low.batch.id)
      expect(lowDone.totals.ok).toBe(60)
    }).pipe(
      Effect.scoped,
      Effect.provide(runningLinkcheck(fleet, layerMemory(), { concurrency: 2, perHostConcurrency: 2 }))
    ), { timeout: 60_000 })

  it.live("runs up to the per-host limit of one host at once, never more", () =>
    Effect.gen(function*() {
      const linkChecker = yield* LinkChecker
      const host = `limit.test:${fleet.httpPort}`
      const created = yield* linkChecker.createBatch({
        uris: Array.from({ length: 40 }, (_, n) => `http://${host}/slow?ms=50&limit=${n}`),
        checkedWithin: 0,
        priority: "high"
      })
      const done = yield* completedBatch(created.batch.id)
      expect(done.totals.ok).toBe(40)
      expect(fleet.peakConcurrentRequests(host)).toBe(3)
    }).pipe(
      Effect.scoped,
      Effect.provide(runningLinkcheck(fleet, layerMemory(), { concurrency: 64, perHostConcurrency: 3 }))
    ))

  it.live("asks one host no more often than its per-host interval, whatever slots are free", () =>
    Effect.gen(function*() {
      const arrivals: Array<number> = []
      const site = yield* Effect.acquireRelease(
        Effect.promise(() => {
          const server = createServer((_, response) => {
            arrivals.push(performance.now())
            response.end("ok")
          })
          return new Promise<typeof server>((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)))
        }),
        (server) => Effect.promise(() => new Promise((resolve) => server.close(resolve)))
      )
      const { port } = site.address() as AddressInfo
      const linkChecker = yield* LinkChecker
      const created = yield* linkChecker.createBatch({
        uris: Array.from({ length: 12 }, (_, n) => `http://127.0.0.1:${port}/interval?n=${n}`),
        checkedWithin: 0,
        priority: "high"
      })
      expect((yield* completedBatch(created.batch.id)).totals.ok).toBe(12)
      const gaps = arrivals.slice(1).map((at, index) => at - arrivals[index]!)
      // a turn taken a few milliseconds late keeps the pace, so the next gap may be that much shorter
      expect(Math.min(...gaps)).toBeGreaterThan(80)
      expect(arrivals[11]! - arrivals[0]!).toBeGreaterThan(11 * 100 - 20)
    }).pipe(
      Effect.scoped,
      Effect.provide(runningLinkcheck(fleet, layerMemory(), {
        concurrency: 64,
        perHostConcurrency: 4,
        scheduler: { perHostInterval: "100 millis" }
      }))
    ))

  it.live("two copies sharing a store run up to the per-host limit of one host together, never more", () =>
    Effect.gen(function*() {
      const store = Layer.succeedContext(yield* Layer.build(layerMemory()))
      const copy = () =>
        Layer.build(runningLinkcheck(fleet, store, { concurrency: 64, perHostConcurrency: 3 }))
      const first = Context.get(yield* copy(), LinkChecker)
      yield* copy()
      const host = `shared-limit.test:${fleet.httpPort}`
      const created = yield* first.createBatch({
        uris: Array.from({ length: 40 }, (_, n) => `http://${host}/slow?ms=50&shared=${n}`),
        checkedWithin: 0,
        priority: "high"
      })
      const done = yield* completedBatch(created.batch.id).pipe(Effect.provideService(LinkChecker, first))
      expect(done.totals.ok).toBe(40)
      expect(fleet.peakConcurrentRequests(host)).toBe(3)
    }).pipe(Effect.scoped))

  it.live("two live copies share one host out instead of one holding every allowed claim", () =>
    Effect.gen(function*() {
      const store = Layer.succeedContext(yield* Layer.build(layerMemory()))
      const copy = (name: string) =>
        Layer.build(runningLinkcheck(fleet, store, { concurrency: 64, perHostConcurrency: 4, inspector: { userAgent: name } }))
      const first = Context.get(yield* copy("copy-1"), LinkChecker)
      yield* copy("copy-2")
      const host = `shared-out.test:${fleet.httpPort}`
      const paths = Array.from({ length: 40 }, (_, n) => `/slow?ms=40&shared-out=${n}`)
      const { batch } = yield* first.createBatch({ uris: paths.map((path) => `http://${host}${path}`), checkedWithin: 0 })
      const done = yield* completedBatch(batch.id).pipe(Effect.provideService(LinkChecker, first))
      expect(done.totals.ok).toBe(40)
      const byCopy = (name: string) =>
        paths.filter((path) => fleet.requests(path)[0]?.headers["user-agent"] === name).length
      expect(byCopy("copy-1") + byCopy("copy-2")).toBe(40)
      expect(byCopy("copy-2")).toBeGreaterThanOrEqual(10)
      expect(byCopy("copy-1")).toBeGreaterThanOrEqual(10)
      expect(fleet.peakConcurrentRequests(host)).toBeLessThanOrEqual(4)
    }).pipe(Effect.scoped))

  it.live("a restarted process hands back the checks of its earlier life at once instead of waiting for its claims", () =>
    Effect.gen(function*() {
      const storeContext = yield* Layer.build(layerMemory())
      const store = Context.get(storeContext, LinkcheckStore)
      const earlier = Context.get(
        yield* Layer.build(linkcheckWithoutWorkers(fleet, Layer.succeedContext(storeContext))),
        LinkChecker
      )
      const { batch } = yield* earlier.createBatch({
        uris: Array.from({ length: 5 }, (_, n) => `${fleet.http}/ok?earlier-life=${n}`),
        checkedWithin: 0
      })
      // The earlier life (same host, same pid, as a container restarted in place) claimed them for an hour, then died.
      const now = new Date()
      yield* store.heartbeat({
        workerId: "earlier-life",
        hostname: processSpace(),
        pid: process.pid,
        now,
        holding: [],
        claimUntil: new Date(now.getTime() + 3_600_000)
      })
      expect(yield* claimEverything("earlier-life", now).pipe(Effect.provideService(LinkcheckStore, store))).toHaveLength(5)

      const restarted = Context.get(yield* Layer.build(runningLinkcheck(fleet, Layer.succeedContext(storeContext))), LinkChecker)
      const done = yield* completedBatch(batch.id).pipe(
        Effect.provideService(LinkChecker, restarted),
        Effect.timeout("10 seconds")
      )
      expect(done.totals.ok).toBe(5)
    }).pipe(Effect.scoped))

  it.live("a shutdown at any moment leaves every check recorded or handed back, none held by the stopped worker", () =>
    Effect.gen(function*() {
      for (let round = 0; round < 30; round++) {
        const storeContext = yield* Layer.build(layerMemory())
        const store = Context.get(storeContext, LinkcheckStore)
        const scope = yield* Scope.make()
        const service = yield* Layer.buildWithScope(
          runningLinkcheck(fleet, Layer.succeedContext(storeContext), { concurrency: 8, perHostConcurrency: 8 }),
          scope
        )
        const linkChecker = Context.get(service, LinkChecker)
        const { batch } = yield* linkChecker.createBatch({
          uris: Array.from({ length: 40 }, (_, n) => `${fleet.http}/slow?ms=${n % 5}&round=${round}&n=${n}`),
          checkedWithin: 0
        })
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5 + ((round * 7) % 60))))
        yield* Scope.close(scope, Exit.void)

        const pending = (yield* linkChecker.getBatch(batch.id, "every batch")).totals.pending
        const claimable = yield* claimEverything("next-worker", new Date()).pipe(Effect.provideService(LinkcheckStore, store))
        expect({ round, claimable: claimable.length }).toEqual({ round, claimable: pending })
      }
    }).pipe(Effect.scoped), { timeout: 60_000 })

  it.live("on shutdown running checks finish and checks claimed ahead go back unstarted", () =>
    Effect.gen(function*() {
      const storeContext = yield* Layer.build(layerMemory())
      const store = Context.get(storeContext, LinkcheckStore)
      const scope = yield* Scope.make()
      const service = yield* Layer.buildWithScope(
        runningLinkcheck(fleet, Layer.succeedContext(storeContext), { concurrency: 2, perHostConcurrency: 2, scheduler: { prefetch: 4 } }),
        scope
      )
      const linkChecker = Context.get(service, LinkChecker)
      const host = `shutdown.test:${fleet.httpPort}`
      const created = yield* linkChecker.createBatch({
        uris: Array.from({ length: 6 }, (_, n) => `http://${host}/slow?ms=400&n=${n}`),
        checkedWithin: 0,
        priority: "high"
      })
      while (fleet.peakConcurrentRequests(host) < 2) yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
      yield* Scope.close(scope, Exit.void)

      const report = yield* linkChecker.getBatch(created.batch.id, "every batch")
      expect(report.totals).toMatchObject({ links: 6, ok: 2, pending: 4 })
      const reclaimed = yield* claimEverything("another-worker", new Date()).pipe(Effect.provideService(LinkcheckStore, store))
      expect(reclaimed.map((check) => [check.uri, check.attempts])).toEqual(
        report.links.filter((link) => link.checked === null).map((link) => [link.uri, 1])
      )
    }).pipe(Effect.scoped))
})
