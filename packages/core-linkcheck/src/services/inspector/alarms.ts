import { Clock, Effect } from "effect"
import type { Scope } from "effect"

export interface Alarms {
  /** Calls `ring` once Effect's Clock reaches `atMillis`, unless the returned function is called first. */
  readonly set: (atMillis: number, ring: () => void) => () => void
}

interface Alarm {
  readonly atMillis: number
  readonly ring: () => void
}

/**
 * Alarms on Effect's Clock, rung by one fiber that sleeps until the earliest. A check's deadline is one of them:
 * `Effect.timeout` would race two more fibers for every request, and a plain timer would not follow a TestClock.
 */
export const makeAlarms: Effect.Effect<Alarms, never, Scope.Scope> = Effect.gen(function*() {
  const pending = new Set<Alarm>()
  /** When the ringing fiber wakes next; Infinity while it waits for a first alarm. */
  let wakesAt = Number.POSITIVE_INFINITY
  /** Wakes the ringing fiber early, for an alarm earlier than the one it sleeps until. */
  let wakeEarly: (() => void) | undefined
  /** An earlier alarm came while the ringing fiber was between its look at the alarms and its wait. */
  let cameEarly = false

  const earlierAlarm = Effect.async<void>((resume) => {
    if (cameEarly) return resume(Effect.void)
    wakeEarly = () => {
      wakeEarly = undefined
      resume(Effect.void)
    }
    return Effect.sync(() => {
      wakeEarly = undefined
    })
  })

  const ringDue = Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    cameEarly = false
    let next = Number.POSITIVE_INFINITY
    for (const alarm of pending) {
      if (alarm.atMillis <= now) {
        pending.delete(alarm)
        alarm.ring()
      } else if (alarm.atMillis < next) next = alarm.atMillis
    }
    wakesAt = next
    return next === Number.POSITIVE_INFINITY ? earlierAlarm : Effect.raceFirst(Effect.sleep(next - now), earlierAlarm)
  })

  yield* Effect.forkScoped(Effect.forever(Effect.flatten(ringDue)))

  return {
    set: (atMillis, ring) => {
      const alarm: Alarm = { atMillis, ring }
      pending.add(alarm)
      if (atMillis < wakesAt) {
        wakesAt = atMillis
        if (wakeEarly === undefined) cameEarly = true
        else wakeEarly()
      }
      return () => {
        pending.delete(alarm)
      }
    }
  }
})
