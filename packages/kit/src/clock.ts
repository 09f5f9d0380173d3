import { Clock, Effect } from "effect"

/** The current time from Effect's `Clock`, so that tests move it with `TestClock`. */
export const now: Effect.Effect<Date> = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))
