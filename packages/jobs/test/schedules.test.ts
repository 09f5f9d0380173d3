import { describe, expect, it } from "@effect/vitest"
import type { Scope } from "effect"
import { Cause, Duration, Effect, Fiber, HashMap, Logger, LogLevel, Option, Schema, TestClock } from "effect"
import { JobDefinition, JobQueue, layerMemory, runSchedules } from "../src/index"
import type { RecurringSchedule } from "../src/index"
import { sleepersAtLeast } from "./helpers"

const digest = JobDefinition.make({ queue: "digest", payload: Schema.Struct({ kind: Schema.String }) })

const scheduleOf = (name: string, cron: string, timeZone: string): RecurringSchedule<any, any> => ({
  name,
  cron,
  timeZone,
  definition: digest,
  payload: { kind: name }
})

/** The kinds of the digest jobs enqueued so far, taken off the queue. */
const takeFired = Effect.map(
  Effect.flatMap(JobQueue, (jobs) =>
    jobs.claim({ queue: "digest", workerId: "test", limit: 100, leaseDuration: Duration.minutes(1) })),
  (claimed) => claimed.map((job) => (job.payload as { kind: string }).kind).sort()
)

/**
 * Starts `schedules` at `start` and checks that each of `slots` fires exactly there (nothing a second before, the
 * named schedules at the slot), then stops them. (The TestClock wakes the schedulers hourly on the way to each slot,
 * as the real clock would, so long spans make slow tests.)
 */
const expectSlots = (
  start: string,
  schedules: ReadonlyArray<RecurringSchedule<any, any>>,
  slots: ReadonlyArray<readonly [at: string, ...names: Array<string>]>
) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(Date.parse(start))
    const running = yield* Effect.fork(runSchedules(schedules))
    yield* sleepersAtLeast(schedules.length)
    expect(yield* takeFired).toEqual([])
    for (const [at, ...names] of slots) {
      yield* TestClock.setTime(Date.parse(at) - 1000)
      yield* sleepersAtLeast(schedules.length)
      expect(yield* takeFired, `nothing before ${at}`).toEqual([])
      yield* TestClock.setTime(Date.parse(at))
      yield* sleepersAtLeast(schedules.length)
      expect(yield* takeFired, `what fires at ${at}`).toEqual([...names].sort())
    }
    yield* Fiber.interrupt(running)
  })

const test = (title: string, body: () => Effect.Effect<void, unknown, JobQueue | Scope.Scope>) =>
  it.scoped(title, () => body().pipe(Effect.provide(layerMemory)))

describe("recurring schedules", () => {
  // 08:30 in London is 08:30 UTC in winter and 07:30 UTC in summer (BST, from 30 March 2025 to 26 October 2025)
  test("a weekly schedule fires on Saturdays at 08:30 in London across the March clock change", () =>
    expectSlots("2025-03-26T12:00:00Z", [scheduleOf("weekly", "30 8 * * 6", "Europe/London")], [
      ["2025-03-29T08:30:00Z", "weekly"],
      ["2025-04-05T07:30:00Z", "weekly"],
      ["2025-04-12T07:30:00Z", "weekly"]
    ]))

  test("a weekly schedule fires on Saturdays at 08:30 in London across the October clock change", () =>
    expectSlots("2025-10-22T12:00:00Z", [scheduleOf("weekly", "30 8 * * 6", "Europe/London")], [
      ["2025-10-25T07:30:00Z", "weekly"],
      ["2025-11-01T08:30:00Z", "weekly"],
      ["2025-11-08T08:30:00Z", "weekly"]
    ]))

  test("a weekly schedule started on its own day before its time fires that day, in UTC", () =>
    expectSlots("2026-11-28T08:00:00Z", [scheduleOf("weekly", "30 8 * * 6", "UTC")], [
      ["2026-11-28T08:30:00Z", "weekly"],
      ["2026-12-05T08:30:00Z", "weekly"]
    ]))

  test("a monthly schedule fires on the first of each month at 03:00 local time", () =>
    Effect.gen(function*() {
      const monthly = scheduleOf("monthly", "0 3 1 * *", "Europe/London")
      yield* expectSlots("2025-01-28T12:00:00Z", [monthly], [
        ["2025-02-01T03:00:00Z", "monthly"],
        ["2025-03-01T03:00:00Z", "monthly"]
      ])
      // stopped for a few weeks in between (as between deploys), with nothing missed
      yield* expectSlots("2025-03-28T12:00:00Z", [monthly], [["2025-04-01T02:00:00Z", "monthly"]])
      // a new monthly schedule, deployed in October, fires first after the clocks went back
      yield* expectSlots("2025-10-28T12:00:00Z", [scheduleOf("monthly-from-october", "0 3 1 * *", "Europe/London")], [
        ["2025-11-01T03:00:00Z", "monthly-from-october"]
      ])
    }))

  test("daily and weekly schedules run side by side, each at its own slots", () =>
    expectSlots(
      "2025-03-27T12:00:00Z",
      [scheduleOf("daily", "30 8 * * *", "Europe/London"), scheduleOf("weekly", "30 8 * * 6", "Europe/London")],
      [
        ["2025-03-28T08:30:00Z", "daily"],
        ["2025-03-29T08:30:00Z", "daily", "weekly"],
        ["2025-03-30T07:30:00Z", "daily"],
        ["2025-03-31T07:30:00Z", "daily"]
      ]
    ))

  test("after a downtime over several weekly slots, only the latest missed one fires, once", () =>
    Effect.gen(function*() {
      const weekly = scheduleOf("weekly", "30 8 * * 6", "Europe/London")
      yield* TestClock.setTime(Date.parse("2025-03-29T09:00:00Z"))
      const before = yield* Effect.fork(runSchedules([weekly]))
      yield* sleepersAtLeast(1)
      yield* Fiber.interrupt(before)
      expect(yield* takeFired).toEqual([])
      // down over the slots of 5 and 12 April
      yield* TestClock.setTime(Date.parse("2025-04-16T12:00:00Z"))
      yield* Effect.forkScoped(runSchedules([weekly]))
      yield* sleepersAtLeast(1)
      expect(yield* takeFired).toEqual(["weekly"])
      yield* TestClock.setTime(Date.parse("2025-04-19T07:29:59Z"))
      yield* sleepersAtLeast(1)
      expect(yield* takeFired).toEqual([])
      yield* TestClock.setTime(Date.parse("2025-04-19T07:30:00Z"))
      yield* sleepersAtLeast(1)
      expect(yield* takeFired).toEqual(["weekly"])
    }))

  test("a schedule whose computation breaks is logged at error while the others keep firing", () =>
    Effect.gen(function*() {
      const logged: Array<{ level: string; message: string; schedule: unknown; cause: string }> = []
      const capture = Logger.make(({ annotations, cause, logLevel, message }) => {
        logged.push({
          level: logLevel.label,
          message: (Array.isArray(message) ? message : [message]).map(String).join(" "),
          schedule: Option.getOrUndefined(HashMap.get(annotations, "schedule")),
          cause: Cause.pretty(cause)
        })
      })
      const errorsLogged = () => logged.filter((entry) => entry.level === LogLevel.Error.label)
      // 30 February never comes: the cron library throws when asked for its slots
      const never = scheduleOf("never", "0 0 30 2 *", "UTC")
      const hourly = scheduleOf("hourly", "0 * * * *", "UTC")
      yield* TestClock.setTime(Date.parse("2025-03-26T12:30:00Z"))
      yield* Effect.forkScoped(
        runSchedules([never, hourly]).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, capture)))
      )
      yield* sleepersAtLeast(2)
      expect(errorsLogged()).toHaveLength(1)
      expect(errorsLogged()[0]).toMatchObject({ schedule: "never" })
      expect(errorsLogged()[0]!.message).toContain(`Schedule "never"`)
      expect(errorsLogged()[0]!.cause).toContain("Unable to find next cron date")

      for (const hour of ["13", "14", "15"]) {
        yield* TestClock.setTime(Date.parse(`2025-03-26T${hour}:00:00Z`))
        yield* sleepersAtLeast(2)
        expect(yield* takeFired).toEqual(["hourly"])
      }
      // the broken schedule is tried again now and then, and logged again
      expect(errorsLogged().length).toBeGreaterThan(1)
    }))
})
