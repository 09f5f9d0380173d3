import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

/** Runs an effect on the PGlite session once it is this caller's turn. */
export type SessionAccess = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

/**
 * PGlite is one database session: a transaction opened on it applies to every
 * statement sent until COMMIT, whoever sends it. The session is guarded by a
 * mutex; a plain statement holds it until it is sent (the database runs what it
 * is sent in order, so the next one may be sent while it runs), a transaction
 * holds it from BEGIN to COMMIT or ROLLBACK.
 */
export interface Session {
  /** Takes the session for the duration of `effect`. */
  readonly use: SessionAccess
  /**
   * Takes the session until the scope closes. The returned access runs effects
   * at once while the session is held and, once the scope has closed, waits its
   * turn like any other caller (e.g. to close a cursor after a transaction ended).
   */
  readonly reserve: Effect.Effect<SessionAccess, never, Scope.Scope>
}

export const makeSession: Effect.Effect<Session> = Effect.sync(() => {
  const mutex = makeFairMutex()
  const use: SessionAccess = (effect) =>
    Effect.uninterruptibleMask((restore) =>
      Effect.zipRight(restore(mutex.acquire), Effect.ensuring(restore(effect), mutex.release))
    )
  const reserve = Effect.uninterruptibleMask((restore) =>
    Effect.gen(function*() {
      yield* restore(mutex.acquire)
      let held = true
      yield* Effect.addFinalizer(() =>
        Effect.suspend(() => {
          held = false
          return mutex.release
        })
      )
      const access: SessionAccess = (effect) => Effect.suspend(() => held ? effect : use(effect))
      return access
    })
  )
  return { use, reserve }
})

interface Waiter {
  handedOver: boolean
  readonly wake: () => void
}

/**
 * A mutex that hands itself to waiters in arrival order. (Effect's Semaphore
 * lets a fiber that releases and at once takes again overtake the waiters, so
 * a loop of statements could keep a transaction waiting indefinitely.)
 */
const makeFairMutex = () => {
  let locked = false
  const waiters: Array<Waiter> = []

  const releaseUnsafe = () => {
    const next = waiters.shift()
    if (next === undefined) {
      locked = false
    } else {
      next.handedOver = true
      next.wake()
    }
  }

  const acquire = Effect.async<void>((resume) => {
    if (!locked) {
      locked = true
      resume(Effect.void)
      return
    }
    const waiter: Waiter = { handedOver: false, wake: () => resume(Effect.void) }
    waiters.push(waiter)
    return Effect.sync(() => {
      // Interrupted while waiting, or just after the mutex was handed over.
      if (waiter.handedOver) releaseUnsafe()
      else waiters.splice(waiters.indexOf(waiter), 1)
    })
  })

  return { acquire, release: Effect.sync(releaseUnsafe) }
}
