import { Clock, Effect } from "effect"
import type { Scope } from "effect"

export interface Alarms {
  /** Calls `ring` once Effect's Clock reaches `atMillis`, unless the returned function is called first. */
  readonly set: (atMillis: number, ring: () => void) => () => void
}

interface Alarm {
  readonly atMillis: number
  readonly ring: () => void
  armed: boolean
}

/** Past this many disarmed alarms, and half the heap, they are swept out rather than left to surface. */
const SWEEP_AFTER = 1024

/**
 * The alarms in a binary min-heap by time; a disarmed alarm stays until it surfaces or a sweep, so that setting and
 * disarming cost a logarithm each, however many thousands of checks hold an alarm.
 */
class AlarmHeap {
  private items: Array<Alarm> = []
  private disarmed = 0

  get earliest(): Alarm | undefined {
    return this.items[0]
  }

  push(alarm: Alarm): void {
    this.items.push(alarm)
    this.siftUp(this.items.length - 1)
  }

  pop(): Alarm | undefined {
    const items = this.items
    const top = items[0]
    const last = items.pop()
    if (top !== last && last !== undefined) {
      items[0] = last
      this.siftDown(0)
    }
    if (top !== undefined && !top.armed) this.disarmed -= 1
    return top
  }

  disarm(alarm: Alarm): void {
    if (!alarm.armed) return
    alarm.armed = false
    this.disarmed += 1
    if (this.disarmed > SWEEP_AFTER && this.disarmed * 2 > this.items.length) {
      this.items = this.items.filter((item) => item.armed)
      this.disarmed = 0
      for (let index = (this.items.length >> 1) - 1; index >= 0; index--) this.siftDown(index)
    }
  }

  /** Drops the disarmed alarms at the top, so that `earliest` is one that will ring. */
  dropDisarmed(): void {
    while (this.items[0] !== undefined && !this.items[0].armed) this.pop()
  }

  private siftUp(index: number): void {
    const items = this.items
    const item = items[index]!
    while (index > 0) {
      const parent = (index - 1) >> 1
      if (items[parent]!.atMillis <= item.atMillis) break
      items[index] = items[parent]!
      index = parent
    }
    items[index] = item
  }

  private siftDown(index: number): void {
    const items = this.items
    const item = items[index]!
    const half = items.length >> 1
    while (index < half) {
      let child = 2 * index + 1
      if (child + 1 < items.length && items[child + 1]!.atMillis < items[child]!.atMillis) child += 1
      if (items[child]!.atMillis >= item.atMillis) break
      items[index] = items[child]!
      index = child
    }
    items[index] = item
  }
}

/**
 * Alarms on Effect's Clock, rung by one fiber that sleeps until the earliest. A check's deadline is one of them:
 * `Effect.timeout` would race two more fibers for every request, and a plain timer would not follow a TestClock.
 */
export const makeAlarms: Effect.Effect<Alarms, never, Scope.Scope> = Effect.gen(function*() {
  const heap = new AlarmHeap()
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
    for (let alarm = heap.earliest; alarm !== undefined && alarm.atMillis <= now; alarm = heap.earliest) {
      heap.pop()
      if (!alarm.armed) continue
      alarm.armed = false
      alarm.ring()
    }
    heap.dropDisarmed()
    const next = heap.earliest?.atMillis ?? Number.POSITIVE_INFINITY
    wakesAt = next
    return next === Number.POSITIVE_INFINITY ? earlierAlarm : Effect.raceFirst(Effect.sleep(next - now), earlierAlarm)
  })

  yield* Effect.forkScoped(Effect.forever(Effect.flatten(ringDue)))

  return {
    set: (atMillis, ring) => {
      const alarm: Alarm = { atMillis, ring, armed: true }
      heap.push(alarm)
      if (atMillis < wakesAt) {
        wakesAt = atMillis
        if (wakeEarly === undefined) cameEarly = true
        else wakeEarly()
      }
      return () => heap.disarm(alarm)
    }
  }
})
