import { Clock, Duration, Effect, Option } from "effect"
import type { StoreError } from "../SsoStore"

/**
 * Reads the SQL store keeps in memory (token holders for `GET /user.json`, applications for client authentication),
 * so that hot requests need not read the database. Every table answers only while its owner can hear every change
 * (`enable`), and `invalidate` forgets everything in every table. A read that a change overtook is not kept: it may
 * have seen the database from before that change. It also knows, once a read has told it, when the latest failed
 * attempt was recorded, so that a request with no failure in its window need not count failures.
 */
export const makeReadMemory = (options: {
  /** A bound on staleness should a change ever go unheard. */
  readonly maxAge: Duration.Duration
}) => {
  const maxAgeMillis = Duration.toMillis(options.maxAge)
  const tables: Array<Map<string, unknown>> = []
  let generation = 0
  let enabled = false
  /** When the latest failed attempt anywhere was recorded (-Infinity: none), or `undefined` until a read tells. */
  let latestFailure: number | undefined
  let failureGeneration = 0

  const invalidate = () => {
    generation += 1
    for (const entries of tables) entries.clear()
  }

  /** One kind of read, by key, holding at most `capacity` answers (the least recently used go first). */
  const table = <A>(capacity: number) => {
    const entries = new Map<string, { readonly value: A; readonly storedAt: number }>()
    tables.push(entries)

    const keep = (key: string, value: A, storedAt: number) => {
      entries.set(key, { value, storedAt })
      if (entries.size > capacity) entries.delete(entries.keys().next().value!)
    }

    /** The answer kept in memory, if it is there and may be given; never reads. */
    const peek = (key: string, nowMillis: number): Option.Option<A> => {
      const kept = enabled ? entries.get(key) : undefined
      if (kept === undefined || nowMillis - kept.storedAt >= maxAgeMillis) return Option.none()
      // the most recently used come last, so the first are evicted first
      entries.delete(key)
      entries.set(key, kept)
      return Option.some(kept.value)
    }

    /** The answer from memory when it is there, else from `read`, kept for next time when it found something. */
    const lookup = (key: string, read: Effect.Effect<Option.Option<A>, StoreError>): Effect.Effect<Option.Option<A>, StoreError> =>
      Effect.suspend(() => {
        if (!enabled) return read
        return Effect.flatMap(Clock.currentTimeMillis, (now) => {
          const kept = peek(key, now)
          if (Option.isSome(kept)) return Effect.succeed(kept)
          const readFrom = generation
          return Effect.tap(read, (found) => {
            if (Option.isSome(found) && enabled && generation === readFrom) keep(key, found.value, now)
          })
        })
      })

    return { peek, lookup }
  }

  const failures = {
    /** A failed attempt recorded at `atMillis`, by this copy or another. */
    heard: (atMillis: number) => {
      failureGeneration += 1
      if (latestFailure !== undefined) latestFailure = Math.max(latestFailure, atMillis)
    },
    /** Whether this copy knows for certain that no failed attempt was recorded after `sinceMillis`. */
    noneSince: (sinceMillis: number) => enabled && latestFailure !== undefined && latestFailure <= sinceMillis,
    /** Whether a read should also ask for the latest failed attempt. */
    get unknown() {
      return latestFailure === undefined
    },
    /** Runs `read`; what it tells of the latest failed attempt is kept unless a failure was heard meanwhile. */
    learnFrom: <A>(read: Effect.Effect<{ readonly answer: A; readonly latest: number | undefined }, StoreError>) =>
      Effect.suspend(() => {
        const readFrom = failureGeneration
        return Effect.map(read, ({ answer, latest }) => {
          if (latest !== undefined && enabled && failureGeneration === readFrom) latestFailure = latest
          return answer
        })
      })
  }

  return {
    invalidate,
    get enabled() {
      return enabled
    },
    setEnabled: (on: boolean) => {
      enabled = on
      latestFailure = undefined
      failureGeneration += 1
      invalidate()
    },
    table,
    failures
  }
}

export type ReadMemory = ReturnType<typeof makeReadMemory>
