import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { makeAlarms } from "../../../src/services/inspector/alarms"

/** Lets the ringing fiber run after the test moved the clock or set an alarm. */
const settle = Effect.yieldNow().pipe(Effect.repeatN(5))

describe("alarms on Effect's Clock", () => {
  it.scoped("ring once at their time, never before, in time order, and not once disarmed", () =>
    Effect.gen(function*() {
      const alarms = yield* makeAlarms
      const rung: Array<string> = []
      alarms.set(3_000, () => rung.push("at 3 s"))
      alarms.set(1_000, () => rung.push("at 1 s"))
      const disarm = alarms.set(2_000, () => rung.push("disarmed"))
      yield* settle
      disarm()

      yield* TestClock.adjust("999 millis")
      yield* settle
      expect(rung).toEqual([])
      yield* TestClock.adjust("1 millis")
      yield* settle
      expect(rung).toEqual(["at 1 s"])
      yield* TestClock.adjust("10 seconds")
      yield* settle
      expect(rung).toEqual(["at 1 s", "at 3 s"])
    }))

  it.scoped("an alarm earlier than the one the ringer sleeps until rings at its own time", () =>
    Effect.gen(function*() {
      const alarms = yield* makeAlarms
      const rung: Array<string> = []
      alarms.set(60_000, () => rung.push("late"))
      yield* settle
      alarms.set(500, () => rung.push("early"))
      yield* settle
      yield* TestClock.adjust("500 millis")
      yield* settle
      expect(rung).toEqual(["early"])
    }))

  it.scoped("an alarm whose time has passed rings at once", () =>
    Effect.gen(function*() {
      const alarms = yield* makeAlarms
      yield* TestClock.adjust("5 seconds")
      const rung: Array<number> = []
      alarms.set(1_000, () => rung.push(1))
      yield* settle
      expect(rung).toEqual([1])
    }))

  it.scoped("thousands set and most disarmed: each armed one rings once, in time order, no disarmed one rings", () =>
    Effect.gen(function*() {
      const alarms = yield* makeAlarms
      const rung: Array<number> = []
      const disarmers: Array<() => void> = []
      // 50 times, each shared by many, set in a shuffled order, up to 10 s
      const timeOf = (n: number) => ((n * 7_919) % 50) * 200
      for (let n = 0; n < 6_000; n++) disarmers.push(alarms.set(timeOf(n), () => rung.push(n)))
      for (let n = 0; n < 6_000; n++) if (n % 3 !== 0) disarmers[n]!()
      yield* settle
      for (let step = 0; step < 20; step++) {
        yield* TestClock.adjust("500 millis")
        yield* settle
      }
      const expected = Array.from({ length: 2_000 }, (_, k) => 3 * k)
      expect([...rung].sort((a, b) => a - b)).toEqual(expected)
      const times = rung.map(timeOf)
      expect(times.every((time, index) => index === 0 || times[index - 1]! <= time)).toBe(true)
    }))
})
