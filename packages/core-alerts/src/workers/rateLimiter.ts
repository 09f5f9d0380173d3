import { Clock, Duration, Effect, Ref } from "effect"

interface Slots {
  readonly origin: number
  readonly issued: number
}

/**
 * Spaces permits evenly, `perSecond` of them a second: `takeBefore` waits (on `Clock`) for the next free slot, rounded
 * down to the millisecond (so a very high rate never waits), and succeeds with true; when that slot is not before
 * `deadline` (clock milliseconds) it takes nothing and succeeds with false at once. A taker interrupted while waiting
 * leaves its slot unused.
 */
export const makeRateLimiter = (perSecond: number) =>
  Effect.gen(function*() {
    if (!(perSecond > 0)) return yield* Effect.dieMessage(`rate limit must be above 0 per second, got ${perSecond}`)
    const interval = 1000 / perSecond
    /** Slots are counted from the first one, so rounding never lets more than `perSecond` through in a second. */
    const state = yield* Ref.make<Slots | null>(null)
    const takeBefore = (deadline: number) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Ref.modify(state, (current): readonly [number | null, Slots | null] => {
          if (current === null || current.origin + current.issued * interval <= now) {
            return now < deadline ? [0, { origin: now, issued: 1 }] : [null, current]
          }
          const slot = Math.floor(current.origin + current.issued * interval)
          if (slot >= deadline) return [null, current]
          return [slot - now, { origin: current.origin, issued: current.issued + 1 }]
        })).pipe(
          Effect.flatMap((wait) =>
            wait === null ? Effect.succeed(false) : Effect.as(wait > 0 ? Effect.sleep(Duration.millis(wait)) : Effect.void, true)
          )
        )
    return { takeBefore }
  })
