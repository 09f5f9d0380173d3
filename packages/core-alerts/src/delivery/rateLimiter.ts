import { Clock, Duration, Effect, Ref } from "effect"

/**
 * Spaces permits evenly, `perSecond` of them a second: each `take` waits (on `Clock`) for its slot, rounded down to
 * the millisecond (so a very high rate never waits). A taker interrupted while waiting leaves its slot unused.
 */
export const makeRateLimiter = (perSecond: number) =>
  Effect.gen(function*() {
    if (!(perSecond > 0)) return yield* Effect.dieMessage(`rate limit must be above 0 per second, got ${perSecond}`)
    const interval = 1000 / perSecond
    /** Slots are counted from the first one, so rounding never lets more than `perSecond` through in a second. */
    const state = yield* Ref.make<{ readonly origin: number; readonly issued: number } | null>(null)
    const take = Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Ref.modify(state, (current) => {
        if (current === null || current.origin + current.issued * interval <= now) {
          return [0, { origin: now, issued: 1 }] as const
        }
        const slot = Math.floor(current.origin + current.issued * interval)
        return [slot - now, { origin: current.origin, issued: current.issued + 1 }] as const
      })).pipe(Effect.flatMap((wait) => (wait > 0 ? Effect.sleep(Duration.millis(wait)) : Effect.void)))
    return { take }
  })
