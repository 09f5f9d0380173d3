import { it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Schema, Scope } from "effect"
import { createHmac } from "node:crypto"
import { afterAll, beforeAll, describe, expect } from "vitest"
import { BatchReport } from "../../src/api/reports"
import { runScheduler } from "../../src/services/CheckScheduler"
import { LinkChecker } from "../../src/services/LinkChecker"
import { LinkcheckStore } from "../../src/storage/LinkcheckStore"
import { layerMemory } from "../../src/storage/memory"
import { startFixtureFleet } from "../fixtures/fleet"
import type { FixtureFleet } from "../fixtures/fleet"
import { startWebhookReceiver } from "../fixtures/webhookReceiver"
import { linkcheckWithoutWorkers, runningLinkcheck } from "./harness"

let fleet: FixtureFleet
beforeAll(async () => {
  fleet = await startFixtureFleet()
})
afterAll(() => fleet?.close())

const waitForCompletion = (id: number) =>
  Effect.gen(function*() {
    const linkChecker = yield* LinkChecker
    for (;;) {
      const report = yield* linkChecker.getBatch(id)
      if (report.status === "completed") return report
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))
    }
  })

describe("batches through the service", () => {
  it.live("a batch of 5000 uris over 50 hosts completes and fires exactly one correctly signed webhook", () =>
    Effect.gen(function*() {
      const receiver = yield* Effect.acquireRelease(Effect.promise(() => startWebhookReceiver()), (r) => Effect.promise(r.close))
      const uris = Array.from({ length: 5000 }, (_, n) =>
        n % 100 === 7 ? `http://site${n % 50}.test:${fleet.httpPort}/status/404?n=${n}` : `http://site${n % 50}.test:${fleet.httpPort}/ok?n=${n}`)
      const linkChecker = yield* LinkChecker
      const created = yield* linkChecker.createBatch({
        uris,
        checked_within: 14_400,
        priority: "high",
        webhook_uri: receiver.url,
        webhook_secret_token: "s3cret"
      })
      expect(created.completedAtOnce).toBe(false)
      const report = yield* waitForCompletion(created.report.id)
      expect(report.totals).toEqual({ links: 5000, ok: 4950, caution: 0, broken: 50, pending: 0, danger: 0 })
      expect(report.links.map((link) => link.uri)).toEqual(uris)

      yield* Effect.promise(() => receiver.waitFor(1))
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 500)))
      expect(receiver.received).toHaveLength(1)
      const [webhook] = receiver.received
      const expected = createHmac("sha1", "s3cret").update(webhook!.body).digest("hex")
      expect(webhook!.headers["x-linkcheckerapi-signature"]).toBe(expected)
      expect(JSON.parse(webhook!.body.toString("utf8"))).toEqual(Schema.encodeSync(BatchReport)(report))
      const attempts = yield* Effect.flatMap(LinkcheckStore, (store) => store.webhookAttempts(created.report.id))
      expect(attempts.map((attempt) => attempt.statusCode)).toEqual([200])
    }).pipe(Effect.scoped, Effect.provide(runningLinkcheck(fleet, layerMemory))), { timeout: 120_000 })

  it.live("a scheduler given a count that is not a finite number stops at once with a defect naming it", () =>
    Effect.gen(function*() {
      const defect = yield* runScheduler({ perHostConcurrency: Number.POSITIVE_INFINITY }).pipe(
        Effect.catchAllDefect(Effect.succeed)
      )
      expect(String(defect)).toContain("runScheduler: perHostConcurrency must be a finite number (got Infinity)")
    }).pipe(Effect.provide(linkcheckWithoutWorkers(fleet, layerMemory))))

  it.live("a batch whose links all have results is completed at once and still sends its webhook", () =>
    Effect.gen(function*() {
      const receiver = yield* Effect.acquireRelease(Effect.promise(() => startWebhookReceiver()), (r) => Effect.promise(r.close))
      const linkChecker = yield* LinkChecker
      const uris = [`${fleet.http}/ok?again=1`, `${fleet.http}/status/410?again=1`]
      const first = yield* linkChecker.createBatch({ uris, checked_within: 14_400, priority: "high" })
      yield* waitForCompletion(first.report.id)
      const second = yield* linkChecker.createBatch({ uris, checked_within: 14_400, priority: "low", webhook_uri: receiver.url })
      expect(second.completedAtOnce).toBe(true)
      expect(second.report.status).toBe("completed")
      expect(fleet.requestCount("/ok?again=1")).toBe(1)
      yield* Effect.promise(() => receiver.waitFor(1))
      expect(receiver.received[0]!.headers["x-linkcheckerapi-signature"]).toBeUndefined()
    }).pipe(Effect.scoped, Effect.provide(runningLinkcheck(fleet, layerMemory))))

  it.live("high priority links are checked before low ones, and low ones still progress", () =>
    Effect.gen(function*() {
      const linkChecker = yield* LinkChecker
      const low = yield* linkChecker.createBatch({
        uris: Array.from({ length: 60 }, (_, n) => `${fleet.http}/slow?ms=20&low=${n}`),
        checked_within: 0,
        priority: "low"
      })
      const high = yield* linkChecker.createBatch({
        uris: Array.from({ length: 60 }, (_, n) => `${fleet.http}/slow?ms=20&high=${n}`),
        checked_within: 0,
        priority: "high"
      })
      const highDone = yield* waitForCompletion(high.report.id)
      const lowAtThatTime = yield* linkChecker.getBatch(low.report.id)
      expect(highDone.totals.ok).toBe(60)
      expect(lowAtThatTime.totals.pending).toBeGreaterThan(0)
      const lowDone = yield* waitForCompletion(low.report.id)
      expect(lowDone.totals.ok).toBe(60)
    }).pipe(
      Effect.scoped,
      Effect.provide(runningLinkcheck(fleet, layerMemory, { concurrency: 2, perHostConcurrency: 2 }))
    ), { timeout: 60_000 })

  it.live("runs up to the per-host limit of one host at once, never more", () =>
    Effect.gen(function*() {
      const linkChecker = yield* LinkChecker
      const host = `limit.test:${fleet.httpPort}`
      const created = yield* linkChecker.createBatch({
        uris: Array.from({ length: 40 }, (_, n) => `http://${host}/slow?ms=50&limit=${n}`),
        checked_within: 0,
        priority: "high"
      })
      const done = yield* waitForCompletion(created.report.id)
      expect(done.totals.ok).toBe(40)
      expect(fleet.peakConcurrentRequests(host)).toBe(3)
    }).pipe(
      Effect.scoped,
      Effect.provide(runningLinkcheck(fleet, layerMemory, { concurrency: 64, perHostConcurrency: 3 }))
    ))

  it.live("two copies sharing a store run up to the per-host limit of one host together, never more", () =>
    Effect.gen(function*() {
      const store = Layer.succeedContext(yield* Layer.build(layerMemory))
      const copy = (workerId: string) =>
        Layer.build(runningLinkcheck(fleet, store, { concurrency: 64, perHostConcurrency: 3, workerId }))
      const first = Context.get(yield* copy("copy-1"), LinkChecker)
      yield* copy("copy-2")
      const host = `shared-limit.test:${fleet.httpPort}`
      const created = yield* first.createBatch({
        uris: Array.from({ length: 40 }, (_, n) => `http://${host}/slow?ms=50&shared=${n}`),
        checked_within: 0,
        priority: "high"
      })
      const done = yield* waitForCompletion(created.report.id).pipe(Effect.provideService(LinkChecker, first))
      expect(done.totals.ok).toBe(40)
      expect(fleet.peakConcurrentRequests(host)).toBe(3)
    }).pipe(Effect.scoped))

  it.live("on shutdown running checks finish and checks claimed ahead go back unstarted", () =>
    Effect.gen(function*() {
      const storeContext = yield* Layer.build(layerMemory)
      const store = Context.get(storeContext, LinkcheckStore)
      const scope = yield* Scope.make()
      const service = yield* Layer.buildWithScope(
        runningLinkcheck(fleet, Layer.succeedContext(storeContext), { concurrency: 2, perHostConcurrency: 2, prefetch: 4 }),
        scope
      )
      const linkChecker = Context.get(service, LinkChecker)
      const host = `shutdown.test:${fleet.httpPort}`
      const created = yield* linkChecker.createBatch({
        uris: Array.from({ length: 6 }, (_, n) => `http://${host}/slow?ms=400&n=${n}`),
        checked_within: 0,
        priority: "high"
      })
      while (fleet.peakConcurrentRequests(host) < 2) yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
      yield* Scope.close(scope, Exit.void)

      const report = yield* linkChecker.getBatch(created.report.id)
      expect(report.totals).toMatchObject({ links: 6, ok: 2, pending: 4 })
      const now = new Date()
      const reclaimed = yield* store.claimChecks({
        workerId: "another-worker",
        now,
        claimUntil: new Date(now.getTime() + 60_000),
        limit: 10,
        perHost: 10,
        aheadPerHost: 0,
        heldByHost: new Map(),
        lowPriorityQuota: 0
      })
      expect(reclaimed.map((check) => [check.uri, check.attempts])).toEqual(
        report.links.filter((link) => link.checked === null).map((link) => [link.uri, 1])
      )
    }).pipe(Effect.scoped))
})
