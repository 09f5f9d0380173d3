import { Clock, Duration, Effect, Option } from "effect"
import type { StoreError, TokenHolder } from "./SsoStore"

export interface HolderCacheOptions {
  readonly capacity: number
  /** A bound on staleness should a change ever go unheard. */
  readonly maxAge: Duration.Duration
}

/**
 * Token holders kept in memory by the SQL store, so that `GET /user.json` need not read the database. It answers only
 * while its owner can hear every change (`enable`); `invalidate` forgets everything. A read that a change overtook is
 * not kept: it may have seen the database from before that change.
 */
export const makeHolderCache = (options: HolderCacheOptions) => {
  const maxAgeMillis = Duration.toMillis(options.maxAge)
  const entries = new Map<string, { readonly holder: TokenHolder; readonly storedAt: number }>()
  let generation = 0
  let enabled = false

  const invalidate = () => {
    generation += 1
    entries.clear()
  }

  const keep = (tokenHash: string, holder: TokenHolder, storedAt: number) => {
    entries.set(tokenHash, { holder, storedAt })
    if (entries.size > options.capacity) entries.delete(entries.keys().next().value!)
  }

  /** The holder kept in memory, if it is there and may be answered from; never reads. */
  const peek = (tokenHash: string, nowMillis: number): Option.Option<TokenHolder> => {
    const kept = enabled ? entries.get(tokenHash) : undefined
    if (kept === undefined || nowMillis - kept.storedAt >= maxAgeMillis) return Option.none()
    // the most recently used come last, so the first are evicted first
    entries.delete(tokenHash)
    entries.set(tokenHash, kept)
    return Option.some(kept.holder)
  }

  return {
    invalidate,
    get enabled() {
      return enabled
    },
    setEnabled: (on: boolean) => {
      enabled = on
      invalidate()
    },
    peek,
    /** The holder from memory when it is there, else from `read`, kept for next time. */
    lookup: (
      tokenHash: string,
      read: Effect.Effect<Option.Option<TokenHolder>, StoreError>
    ): Effect.Effect<Option.Option<TokenHolder>, StoreError> =>
      Effect.suspend(() => {
        if (!enabled) return read
        return Effect.flatMap(Clock.currentTimeMillis, (now) => {
          const kept = peek(tokenHash, now)
          if (Option.isSome(kept)) return Effect.succeed(kept)
          const readFrom = generation
          return Effect.tap(read, (found) => {
            if (Option.isSome(found) && enabled && generation === readFrom) keep(tokenHash, found.value, now)
          })
        })
      })
  }
}

export type HolderCache = ReturnType<typeof makeHolderCache>
