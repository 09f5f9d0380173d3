import { it } from "@effect/vitest"
import { Duration, Effect, Fiber, TestClock } from "effect"
import { afterAll, beforeAll, describe, expect } from "vitest"
import { LinkChecker } from "../../src/services/LinkChecker"
import { layerMemory } from "../../src/storage/memory"
import { startFixtureFleet } from "../fixtures/fleet"
import type { FixtureFleet } from "../fixtures/fleet"
import { completedBatch, linkcheckWithoutWorkers, runningLinkcheck } from "../fixtures/service"

let fleet: FixtureFleet
beforeAll(async () => {
  fleet = await startFixtureFleet()
})
afterAll(() => fleet?.close())

/** Real time, also under a TestClock: the fleet answers in real time. */
const realPause = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))

const hostnameOf = (host: string) => host.replace(/:\d+$/, "")

const untilInProgress = (watch: { readonly inProgress: () => number }, count: number) =>
  Effect.gen(function*() {
    while (watch.inProgress() < count) yield* realPause(10)
  })

const checkInRequest = (uri: string) =>
  Effect.flatMap(LinkChecker, (linkChecker) => linkChecker.check({ uri, checkedWithin: 0, synchronous: true }))

describe("checks inside requests share the limits of queued checks", () => {
  it.live("a check in a request takes the next free slot of its site before the queued checks, and never one more", () =>
    Effect.gen(function*() {
      const site = fleet.watchRequests((host) => hostnameOf(host).endsWith("slots.test"))
      const linkChecker = yield* LinkChecker
      // subdomains and both ports of one site: one limit
      const origins = [
        `http://slots.test:${fleet.httpPort}`,
        `http://a.slots.test:${fleet.httpPort}`,
        `https://b.slots.test:${fleet.httpsPort}`
      ]
      const { batch } = yield* linkChecker.createBatch({
        uris: Array.from({ length: 16 }, (_, n) => `${origins[n % origins.length]}/slow?ms=500&slots=${n}`),
        checkedWithin: 0
      })
      yield* untilInProgress(site, 2)

      const [elapsed, link] = yield* Effect.timed(checkInRequest(`http://www.slots.test:${fleet.httpPort}/ok?slots`))
      expect(link.status).toBe("ok")
      // the batch needs about 4 s at two at once: the request did not wait for it
      expect(Duration.toMillis(elapsed)).toBeLessThan(2_000)
      expect((yield* linkChecker.getBatch(batch.id, "every batch")).totals.pending).toBeGreaterThan(4)

      const done = yield* completedBatch(batch.id)
      expect(done.totals.pending).toBe(0)
      expect(site.peak()).toBe(2)
    }).pipe(
      Effect.scoped,
      Effect.provide(runningLinkcheck(fleet, layerMemory(), { concurrency: 64, perHostConcurrency: 2 }))
    ), { timeout: 60_000 })

  it.live("a check in a request of a quiet site takes the next free slot of the process before the queued checks", () =>
    Effect.gen(function*() {
      const all = fleet.watchRequests((host) => /^(one|two|three)\.test$/.test(hostnameOf(host)))
      const linkChecker = yield* LinkChecker
      const { batch } = yield* linkChecker.createBatch({
        uris: Array.from({ length: 16 }, (_, n) => `http://${n % 2 === 0 ? "one" : "two"}.test:${fleet.httpPort}/slow?ms=500&global=${n}`),
        checkedWithin: 0
      })
      yield* untilInProgress(all, 2)

      const [elapsed, link] = yield* Effect.timed(checkInRequest(`http://three.test:${fleet.httpPort}/ok?global`))
      expect(link.status).toBe("ok")
      expect(Duration.toMillis(elapsed)).toBeLessThan(2_000)
      expect((yield* linkChecker.getBatch(batch.id, "every batch")).totals.pending).toBeGreaterThan(4)

      yield* completedBatch(batch.id)
      expect(all.peak()).toBe(2)
    }).pipe(
      Effect.scoped,
      Effect.provide(runningLinkcheck(fleet, layerMemory(), { concurrency: 2, perHostConcurrency: 2 }))
    ), { timeout: 60_000 })

  it.effect("waiting for a slot counts against the check's deadline; past it the answer comes with no request made", () =>
    Effect.gen(function*() {
      // the silent server (never answers) and the pages are ports of one site, 127.0.0.1, of one slot
      const holder = yield* Effect.fork(checkInRequest(`${fleet.silent}/holds-the-slot`))
      yield* realPause(200)
      yield* TestClock.adjust("6 seconds")
      const waiting = yield* Effect.fork(checkInRequest(`${fleet.http}/ok?after-waiting`))
      yield* realPause(200)
      expect(fleet.requestCount("/ok?after-waiting")).toBe(0)

      yield* TestClock.adjust("4 seconds")
      const held = yield* Fiber.join(holder)
      expect(held.status).toBe("broken")
      expect(held.problemSummary).toBe("Website unavailable")
      // four seconds of its deadline were left when the slot came
      const served = yield* Fiber.join(waiting)
      expect(served.status).toBe("ok")
      expect(fleet.requestCount("/ok?after-waiting")).toBe(1)

      const nextHolder = yield* Effect.fork(checkInRequest(`${fleet.silent}/holds-it-again`))
      yield* realPause(200)
      const tooLate = yield* Effect.fork(checkInRequest(`${fleet.http}/ok?too-late`))
      yield* realPause(200)
      yield* TestClock.adjust("10 seconds")
      const late = yield* Fiber.join(tooLate)
      expect(late.status).toBe("broken")
      expect(late.problemSummary).toBe("Website unavailable")
      expect(fleet.requestCount("/ok?too-late")).toBe(0)
      yield* Fiber.join(nextHolder)
    }).pipe(
      Effect.provide(linkcheckWithoutWorkers(fleet, layerMemory(), {
        perHostConcurrency: 1,
        inspector: { checkTimeout: "10 seconds", responseTimeout: "10 minutes" }
      }))
    ), { timeout: 30_000 })
})

describe("queued checks and their deadline", () => {
  it.effect("a queued check of a page that drips its HTML ends at the check deadline, and its slot goes to the next", () =>
    Effect.gen(function*() {
      const linkChecker = yield* LinkChecker
      const host = `drip-deadline.test:${fleet.httpPort}`
      const dripping = `http://${host}/drip?every=100&deadline`
      const next = `http://${host}/ok?after-the-drip`
      const { batch } = yield* linkChecker.createBatch({ uris: [dripping, next], checkedWithin: 0 })
      while (fleet.requestsInProgress(host) < 1) yield* realPause(10)
      yield* realPause(200)
      expect(fleet.requestCount("/ok?after-the-drip")).toBe(0)

      yield* TestClock.adjust("10 seconds")
      const report = yield* completedBatch(batch.id)
      expect(report.links.map((link) => [link.uri, link.status, link.problemSummary])).toEqual([
        [dripping, "broken", "Website unavailable"],
        [next, "ok", null]
      ])
    }).pipe(
      Effect.provide(runningLinkcheck(fleet, layerMemory(), {
        perHostConcurrency: 1,
        inspector: { checkTimeout: "10 seconds", responseTimeout: "10 minutes" },
        scheduler: { pollInterval: "1 minute", prefetch: 0 }
      }))
    ), { timeout: 30_000 })
})
