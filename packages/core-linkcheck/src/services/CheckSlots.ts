import { Context, Deferred, Effect, Exit, Layer } from "effect"
import type { Scope } from "effect"
import { CheckSignal } from "./CheckSignal"

/** How many checks this process runs at once, in all and per site. */
export interface SlotLimits {
  readonly concurrency: number
  readonly perSite: number
}

interface Waiter {
  readonly site: string
  readonly granted: Deferred.Deferred<void>
}

/**
 * The check slots of this process: at most `concurrency` checks at once and `perSite` of one site (see `siteOf`),
 * shared by the scheduler's queued checks and the checks that run inside requests. A request that finds no slot
 * waits for the next one its site can use, ahead of every queued check, and requests are served in the order they
 * came.
 */
export class CheckSlots extends Context.Tag("@civicstack/core-linkcheck/CheckSlots")<CheckSlots, {
  /** Whether a queued check of `site` may start now: a slot is free and no request waits for one of the site. */
  readonly canTake: (site: string) => boolean
  /** Takes a slot for a queued check that `canTake` allowed; it must be given back with `release`. */
  readonly take: (site: string) => void
  readonly release: (site: string) => void
  /**
   * A slot of `site` for a request, waiting as long as it takes (interrupt the wait to give up), held until the scope
   * closes. Giving it back wakes the scheduler if a queued check found no slot meanwhile.
   */
  readonly hold: (site: string) => Effect.Effect<void, never, Scope.Scope>
}>() {
  static readonly layer = (limits: SlotLimits): Layer.Layer<CheckSlots, never, CheckSignal> =>
    Layer.effect(
      CheckSlots,
      Effect.map(CheckSignal, (signal) => {
        let total = 0
        const bySite = new Map<string, number>()
        const waiters: Array<Waiter> = []
        const waitersBySite = new Map<string, number>()
        /** A queued check found no slot since a request last gave one back: the scheduler waits for a wake-up. */
        let queuedCheckRefused = false

        const count = (counts: Map<string, number>, site: string, delta: number) => {
          const next = (counts.get(site) ?? 0) + delta
          if (next === 0) counts.delete(site)
          else counts.set(site, next)
        }
        const hasRoom = (site: string) => total < limits.concurrency && (bySite.get(site) ?? 0) < limits.perSite
        const take = (site: string) => {
          total += 1
          count(bySite, site, 1)
        }
        const dequeue = (waiter: Waiter) => {
          const index = waiters.indexOf(waiter)
          if (index === -1) return false
          waiters.splice(index, 1)
          count(waitersBySite, waiter.site, -1)
          return true
        }
        /** Hands the free slots to the waiting requests that can use them, oldest first. */
        const grantWaiters = () => {
          for (const waiter of [...waiters]) {
            if (total >= limits.concurrency) return
            if (!hasRoom(waiter.site)) continue
            dequeue(waiter)
            take(waiter.site)
            Deferred.unsafeDone(waiter.granted, Exit.void)
          }
        }
        const release = (site: string) => {
          total -= 1
          count(bySite, site, -1)
          grantWaiters()
        }

        // While a request waits, its site is full or every slot is taken (`grantWaiters` runs at every release), so
        // a queued check only has to leave the slots of a site that a request waits for.
        const canTake = (site: string) => {
          const may = hasRoom(site) && !waitersBySite.has(site)
          if (!may) queuedCheckRefused = true
          return may
        }

        const releaseForRequest = (site: string) =>
          Effect.suspend(() => {
            release(site)
            if (!queuedCheckRefused) return Effect.void
            queuedCheckRefused = false
            return signal.notify
          })

        const hold = (site: string) =>
          Effect.uninterruptibleMask((restore) =>
            Effect.gen(function*() {
              if (hasRoom(site) && !waitersBySite.has(site)) take(site)
              else {
                const waiter: Waiter = { site, granted: yield* Deferred.make<void>() }
                waiters.push(waiter)
                count(waitersBySite, site, 1)
                yield* restore(Deferred.await(waiter.granted)).pipe(
                  Effect.onInterrupt(() => (dequeue(waiter) ? Effect.void : releaseForRequest(site)))
                )
              }
              yield* Effect.addFinalizer(() => releaseForRequest(site))
            })
          )

        return { canTake, take, release, hold }
      })
    )
}
