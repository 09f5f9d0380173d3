import { describe, expect, it } from "@effect/vitest"
import { Cron, Either, Option } from "effect"
import { latestSlot } from "../src/slots"

const cronOf = (expression: string, timeZone: string) => Either.getOrThrow(Cron.parse(expression, timeZone))

const latest = (expression: string, timeZone: string, now: string) =>
  Option.map(latestSlot(cronOf(expression, timeZone), Date.parse(now)), (slot) => slot.toISOString())

describe("latestSlot", () => {
  it("finds the latest slot of day-of-week crons, for which Cron.prev throws", () => {
    const weekly = cronOf("30 8 * * 6", "Europe/London")
    expect(() => Cron.prev(weekly, Date.parse("2025-03-26T12:00:00Z"))).toThrow()

    expect(latest("30 8 * * 6", "Europe/London", "2025-03-26T12:00:00Z")).toEqual(Option.some("2025-03-22T08:30:00.000Z"))
    expect(latest("30 8 * * 6", "Europe/London", "2025-03-29T08:00:00Z")).toEqual(Option.some("2025-03-22T08:30:00.000Z"))
    expect(latest("30 8 * * 6", "Europe/London", "2025-04-05T07:30:00Z")).toEqual(Option.some("2025-04-05T07:30:00.000Z"))
    expect(latest("30 8 * * 6", "Europe/London", "2025-04-05T07:29:59.999Z")).toEqual(
      Option.some("2025-03-29T08:30:00.000Z")
    )
    expect(latest("30 8 * * 6", "UTC", "2026-11-25T12:00:00Z")).toEqual(Option.some("2026-11-21T08:30:00.000Z"))
    expect(latest("0 9 * * 1-5", "Europe/London", "2025-11-02T12:00:00Z")).toEqual(Option.some("2025-10-31T09:00:00.000Z"))
  })

  it("counts a slot at the current instant as due, including part-way through its second", () => {
    expect(latest("30 8 * * *", "UTC", "2025-06-01T08:30:00.000Z")).toEqual(Option.some("2025-06-01T08:30:00.000Z"))
    expect(latest("30 8 * * *", "UTC", "2025-06-01T08:30:00.999Z")).toEqual(Option.some("2025-06-01T08:30:00.000Z"))
    expect(latest("30 8 * * *", "UTC", "2025-06-01T08:29:59.999Z")).toEqual(Option.some("2025-05-31T08:30:00.000Z"))
  })

  it("finds rare slots years back: the last 29 February", () => {
    expect(latest("0 0 29 2 *", "UTC", "2027-01-01T00:00:00Z")).toEqual(Option.some("2024-02-29T00:00:00.000Z"))
  })

  it("takes a slot in the hour skipped in spring an hour later, and a slot in the hour repeated in autumn once", () => {
    // Cron.prev throws here too, for a daily cron
    expect(() => Cron.prev(cronOf("15 1 * * *", "Europe/London"), Date.parse("2025-03-30T01:30:00Z"))).toThrow()
    // 01:15 does not exist in London on 30 March 2025: the slot is 02:15 BST (01:15 UTC)
    expect(latest("15 1 * * *", "Europe/London", "2025-03-30T01:14:59Z")).toEqual(Option.some("2025-03-29T01:15:00.000Z"))
    expect(latest("15 1 * * *", "Europe/London", "2025-03-30T01:15:00Z")).toEqual(Option.some("2025-03-30T01:15:00.000Z"))
    // (Cron.prev is wrong at 02:30 BST for "45 2": it answers 02:45 BST the same day, a slot still to come)
    expect(latest("45 2 * * *", "Europe/London", "2025-03-30T01:30:00Z")).toEqual(Option.some("2025-03-29T02:45:00.000Z"))
    expect(latest("15 1 * * *", "Europe/London", "2025-03-31T00:15:00Z")).toEqual(Option.some("2025-03-31T00:15:00.000Z"))
    // 01:15 happens twice in London on 26 October 2025 (00:15 and 01:15 UTC): only the first is a slot
    expect(latest("15 1 * * *", "Europe/London", "2025-10-26T00:15:00Z")).toEqual(Option.some("2025-10-26T00:15:00.000Z"))
    expect(latest("15 1 * * *", "Europe/London", "2025-10-26T23:00:00Z")).toEqual(Option.some("2025-10-26T00:15:00.000Z"))
  })

  it("agrees with Cron.prev where that works (daily, hourly, monthly, every few seconds), across clock changes", () => {
    const expressions = ["30 8 * * *", "0 * * * *", "0 3 1 * *", "*/15 * * * * *", "0 0 1 1 *"]
    const nows = ["2025-03-30T00:59:00Z", "2025-03-30T01:30:00Z", "2025-10-26T01:30:00Z", "2025-10-26T02:10:00Z",
      "2025-07-14T12:34:56.789Z", "2026-01-01T00:00:00Z"]
    const failures: Array<string> = []
    for (const expression of expressions) {
      for (const timeZone of ["UTC", "Europe/London", "America/New_York"]) {
        const cron = cronOf(expression, timeZone)
        for (const now of nows) {
          const millis = Date.parse(now)
          let expected: Date
          try {
            expected = Cron.prev(cron, Math.floor(millis / 1000) * 1000 + 1000)
          } catch {
            failures.push(`${expression} in ${timeZone} at ${now}`)
            continue
          }
          expect(latestSlot(cron, millis), `${expression} in ${timeZone} at ${now}`).toEqual(Option.some(expected))
        }
      }
    }
    expect(failures).toEqual([])
  })
})
