import { JobQueue, layerMemory as jobQueueMemory, runSchedules } from "@civicstack/jobs"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, TestClock } from "effect"
import { lastDigestWindow } from "../../src/domain/digests"
import { digestJob } from "../../src/domain/jobs"
import { digestSchedules } from "../../src/workers/digests"
import { deliverySettings } from "../../src/settings"
import { letWorkRun, waitForEffect } from "../fixtures/workers"

const LONDON = "Europe/London"
const utc = (text: string) => new Date(`${text}Z`)
const windowAt = (frequency: "daily" | "weekly", now: string) => {
  const { end, start } = lastDigestWindow(frequency, utc(now), LONDON)
  return [start.toISOString(), end.toISOString()]
}

describe("digest windows, 08:00 to 08:00 London time", () => {
  it("a daily window in winter is the 24 hours before 08:00 GMT", () => {
    expect(windowAt("daily", "2024-03-01T08:30:00")).toEqual(["2024-02-29T08:00:00.000Z", "2024-03-01T08:00:00.000Z"])
    // at 08:00 exactly the window that ends then is the last one
    expect(windowAt("daily", "2024-03-01T08:00:00")).toEqual(["2024-02-29T08:00:00.000Z", "2024-03-01T08:00:00.000Z"])
    expect(windowAt("daily", "2024-03-01T07:59:59")).toEqual(["2024-02-28T08:00:00.000Z", "2024-02-29T08:00:00.000Z"])
  })

  it("the day the clocks go forward (31 March 2024) has a window of 23 hours", () => {
    expect(windowAt("daily", "2024-03-31T07:30:00")).toEqual(["2024-03-30T08:00:00.000Z", "2024-03-31T07:00:00.000Z"])
    expect(windowAt("daily", "2024-04-01T07:30:00")).toEqual(["2024-03-31T07:00:00.000Z", "2024-04-01T07:00:00.000Z"])
  })

  it("the day the clocks go back (27 October 2024) has a window of 25 hours", () => {
    expect(windowAt("daily", "2024-10-27T08:30:00")).toEqual(["2024-10-26T07:00:00.000Z", "2024-10-27T08:00:00.000Z"])
  })

  it("a weekly window runs from Saturday 08:00 to Saturday 08:00", () => {
    // Saturday 30 March, before the change; then the week across it is an hour shorter
    expect(windowAt("weekly", "2024-03-30T08:30:00")).toEqual(["2024-03-23T08:00:00.000Z", "2024-03-30T08:00:00.000Z"])
    expect(windowAt("weekly", "2024-04-06T07:30:00")).toEqual(["2024-03-30T08:00:00.000Z", "2024-04-06T07:00:00.000Z"])
    // a Wednesday: the window that ended last Saturday
    expect(windowAt("weekly", "2024-11-06T12:00:00")).toEqual(["2024-10-26T07:00:00.000Z", "2024-11-02T08:00:00.000Z"])
  })

  it.effect("the daily digest is enqueued every day at 08:30 London time, the weekly one on Saturdays", () =>
    Effect.gen(function*() {
      const jobs = yield* JobQueue
      const digestJobs = Effect.map(jobs.stats, (stats) =>
        stats.find((queue) => queue.queue === digestJob.queue)?.queued ?? 0)
      yield* TestClock.setTime(utc("2024-03-30T08:00:00").getTime())
      const schedules = yield* Effect.fork(runSchedules(digestSchedules(deliverySettings())))
      yield* letWorkRun
      yield* TestClock.setTime(utc("2024-03-30T08:29:00").getTime())
      yield* letWorkRun
      expect(yield* digestJobs).toBe(0)
      // Saturday 30 March, GMT
      yield* TestClock.setTime(utc("2024-03-30T08:31:00").getTime())
      yield* waitForEffect("daily and weekly", Effect.map(digestJobs, (count) => count === 2))
      yield* letWorkRun
      // Sunday 31 March, in summer time: 08:30 is 07:30 UTC
      yield* TestClock.setTime(utc("2024-03-31T07:29:00").getTime())
      yield* letWorkRun
      expect(yield* digestJobs).toBe(2)
      yield* TestClock.setTime(utc("2024-03-31T07:31:00").getTime())
      yield* waitForEffect("the next day's daily", Effect.map(digestJobs, (count) => count === 3))
      // Monday to Friday: the daily one only
      for (const day of ["01", "02", "03", "04", "05"]) {
        yield* TestClock.setTime(utc(`2024-04-${day}T07:31:00`).getTime())
        yield* waitForEffect(`the daily of ${day} April`, Effect.map(digestJobs, (count) => count === 3 + Number(day)))
      }
      yield* letWorkRun
      expect(yield* digestJobs).toBe(8)
      // Saturday 6 April, in summer time
      yield* TestClock.setTime(utc("2024-04-06T07:31:00").getTime())
      yield* waitForEffect("daily and weekly", Effect.map(digestJobs, (count) => count === 10))
      yield* Fiber.interrupt(schedules)
    }).pipe(Effect.provide(jobQueueMemory)))

  it.effect("after the clocks go back (27 October 2024), 08:30 London time is 08:30 UTC again", () =>
    Effect.gen(function*() {
      const jobs = yield* JobQueue
      const digestJobs = Effect.map(jobs.stats, (stats) =>
        stats.find((queue) => queue.queue === digestJob.queue)?.queued ?? 0)
      yield* TestClock.setTime(utc("2024-10-26T12:00:00").getTime())
      const schedules = yield* Effect.fork(runSchedules(digestSchedules(deliverySettings())))
      yield* letWorkRun
      // 08:31 in summer time, but the clocks went back at 01:00 UTC
      yield* TestClock.setTime(utc("2024-10-27T07:31:00").getTime())
      yield* letWorkRun
      expect(yield* digestJobs).toBe(0)
      yield* TestClock.setTime(utc("2024-10-27T08:31:00").getTime())
      yield* waitForEffect("the daily", Effect.map(digestJobs, (count) => count === 1))
      // Saturday 2 November, in winter time
      yield* TestClock.setTime(utc("2024-11-02T08:29:00").getTime())
      yield* waitForEffect("the dailies to Friday", Effect.map(digestJobs, (count) => count === 6))
      yield* letWorkRun
      expect(yield* digestJobs).toBe(6)
      yield* TestClock.setTime(utc("2024-11-02T08:31:00").getTime())
      yield* waitForEffect("daily and weekly", Effect.map(digestJobs, (count) => count === 8))
      yield* Fiber.interrupt(schedules)
    }).pipe(Effect.provide(jobQueueMemory)))
})
