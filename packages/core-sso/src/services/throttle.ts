import { Duration, Effect } from "effect"
import type { SsoStore } from "../storage/SsoStore"
import type { Context } from "effect"
import type { StoreError } from "../storage/SsoStore"

export interface ThrottleRule {
  readonly key: string
  readonly limit: number
}

/** Failed attempts counted in a sliding window under several keys (a client, an address), shared through storage. */
export const makeThrottle = (store: Context.Tag.Service<SsoStore>, window: Duration.Duration) => {
  const windowMillis = Duration.toMillis(window)
  return {
    /** Seconds until an attempt is allowed again under every rule, or `undefined` when it is allowed now. */
    retryAfter: (rules: ReadonlyArray<ThrottleRule>, now: Date): Effect.Effect<number | undefined, StoreError> =>
      Effect.map(
        store.failedAttempts(rules.map((rule) => rule.key), new Date(now.getTime() - windowMillis)),
        (counts) => {
          const blocked = counts.flatMap(({ count, oldest }, index) =>
            count >= rules[index]!.limit && oldest !== null
              ? [Math.max(1, Math.ceil((oldest.getTime() + windowMillis - now.getTime()) / 1000))]
              : []
          )
          return blocked.length === 0 ? undefined : Math.max(...blocked)
        }
      ),
    recordFailure: (rules: ReadonlyArray<ThrottleRule>, now: Date) =>
      store.recordFailedAttempt(rules.map((rule) => rule.key), now, new Date(now.getTime() - windowMillis))
  }
}
