import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Chunk, Duration, Effect, Fiber, TestClock } from "effect"
import { startFixtureFleet } from "../../fixtures/fleet"
import type { FixtureFleet } from "../../fixtures/fleet"
import { checkLink, expectOk, expectSingleProblem } from "./support"

let fleet: FixtureFleet
beforeAll(async () => {
  fleet = await startFixtureFleet()
})
afterAll(() => fleet.close())

/** Real time passing, whatever clock the test runs with: the fixtures answer in real time. */
const realPause = (millis: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, millis)))

const waitUntil = (condition: Effect.Effect<boolean>): Effect.Effect<void> =>
  Effect.flatMap(condition, (done) => (done ? Effect.void : Effect.zipRight(realPause(5), waitUntil(condition))))

/**
 * The requests' deadlines are alarms on the same clock. Set far beyond the retry waits, so that a sleep of a retry's
 * length can only be the retry's: with the default 30 s check timeout, the first request's deadline looked like a
 * 30 s Retry-After before the 429 had arrived.
 */
const farDeadlines = { connectTimeout: "1 hour", responseTimeout: "1 hour", checkTimeout: "2 hours" } as const

/** Waits until something sleeps for `millis` from the test clock's now: the retry's wait, not the request's deadline. */
const waitForRetryWait = (millis: number) =>
  waitUntil(Effect.gen(function*() {
    const wakeAt = (yield* TestClock.currentTimeMillis) + millis
    return (yield* TestClock.sleeps()).pipe(Chunk.some((at) => at === wakeAt))
  }))

describe("LinkInspector: 429 and 503 retries", () => {
  it.live("a background check retries a 429 and reports the page that follows", () =>
    Effect.gen(function*() {
      const path = "/flaky/429/twice"
      expectOk(yield* checkLink(fleet, `${fleet.http}${path}?failures=2`, { background: true }))
      expect(fleet.requestCount(`${path}?failures=2`)).toBe(3)
    }))

  it.live("a background check retries a 503 and reports the page that follows", () =>
    Effect.gen(function*() {
      const path = "/flaky/503/once?failures=1"
      expectOk(yield* checkLink(fleet, `${fleet.http}${path}`, { background: true }))
      expect(fleet.requestCount(path)).toBe(2)
    }))

  it.live("a 429 that does not go away: rate limited after the configured retries", () =>
    Effect.gen(function*() {
      const path = "/flaky/429/always?failures=always&retry-after=120"
      const [elapsed, outcome] = yield* Effect.timed(checkLink(fleet, `${fleet.http}${path}`, { background: true }))
      expectSingleProblem(outcome, { status: "caution", summary: "Rate limited", severity: "warning" })
      expect(fleet.requestCount(path)).toBe(4)
      // Retry-After: 120 is capped at maxRetryAfter (50 ms in these tests).
      expect(Duration.toMillis(elapsed)).toBeLessThan(3_000)
    }))

  it.live("a 503 that does not go away: page unavailable after the configured retries", () =>
    Effect.gen(function*() {
      const path = "/flaky/503/always?failures=always"
      const outcome = yield* checkLink(fleet, `${fleet.http}${path}`, {
        background: true,
        config: { retries: { attempts: 2, maxRetryAfter: "1 second", baseDelay: "5 millis" } }
      })
      expectSingleProblem(outcome, { status: "broken", summary: "Page unavailable", severity: "error" })
      expect(fleet.requestCount(path)).toBe(3)
    }))

  it.live("other statuses are not retried", () =>
    Effect.gen(function*() {
      const path = "/flaky/500/never-again?failures=1"
      const outcome = yield* checkLink(fleet, `${fleet.http}${path}`, { background: true })
      expect(outcome.problemSummary).toBe("Page unavailable")
      expect(fleet.requestCount(path)).toBe(1)
    }))

  it.live("a check that is not in the background does not retry", () =>
    Effect.gen(function*() {
      const path = "/flaky/429/interactive?failures=1"
      const outcome = yield* checkLink(fleet, `${fleet.http}${path}`, { background: false })
      expectSingleProblem(outcome, { status: "caution", summary: "Rate limited", severity: "warning" })
      expect(fleet.requestCount(path)).toBe(1)
    }))

  it.effect("the retry waits for Retry-After on Effect's clock", () =>
    Effect.gen(function*() {
      const path = "/flaky/429/honoured?failures=1&retry-after=30"
      const check = yield* Effect.fork(checkLink(fleet, `${fleet.http}${path}`, {
        background: true,
        config: { ...farDeadlines, retries: { attempts: 3, maxRetryAfter: "60 seconds", baseDelay: "1 second" } }
      }))
      yield* waitForRetryWait(30_000)
      yield* TestClock.adjust("29 seconds")
      yield* realPause(100)
      expect(fleet.requestCount(path)).toBe(1)

      yield* TestClock.adjust("1 second")
      expectOk(yield* Fiber.join(check))
      expect(fleet.requestCount(path)).toBe(2)
    }))

  it.effect("without Retry-After the waits grow from the base delay", () =>
    Effect.gen(function*() {
      const path = "/flaky/503/backoff?failures=2"
      const check = yield* Effect.fork(checkLink(fleet, `${fleet.http}${path}`, {
        background: true,
        config: { ...farDeadlines, retries: { attempts: 3, maxRetryAfter: "60 seconds", baseDelay: "1 second" } }
      }))
      yield* waitForRetryWait(1_000)
      yield* TestClock.adjust("1 second")
      yield* waitUntil(Effect.sync(() => fleet.requestCount(path) === 2))
      yield* waitForRetryWait(2_000)
      yield* TestClock.adjust("1999 millis")
      yield* realPause(100)
      expect(fleet.requestCount(path)).toBe(2)

      yield* TestClock.adjust("1 millis")
      expectOk(yield* Fiber.join(check))
      expect(fleet.requestCount(path)).toBe(3)
    }))
})
