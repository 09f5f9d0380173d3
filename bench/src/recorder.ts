import { Deferred, Effect, Exit } from "effect"
import type { JobPayload } from "./payload"
import { percentileOfSorted } from "./percentile"

/** What the handlers saw, once the run is over. */
export interface Observations {
  readonly distinct: number
  readonly duplicates: number
  readonly missing: number
  /** Handler calls for a job number the producer never enqueued. */
  readonly unknown: number
  /** Epoch ms at which the last not-yet-seen job started, i.e. when the queue was drained. */
  readonly lastFirstStartAt: number
  /** Null when no job started. */
  readonly delayP50Ms: number | null
  readonly delayP99Ms: number | null
}

/**
 * Called by every system's handler as its first action. It is a plain function so that
 * Promise-based peers and Effect handlers record the same way, with the same time source.
 */
export interface Recorder {
  readonly record: (payload: JobPayload) => void
  readonly distinctSoFar: () => number
  /** Completes when every enqueued job has started at least once. */
  readonly allStarted: Effect.Effect<void>
  readonly observe: () => Observations
}

export const makeRecorder = (expectedJobs: number): Effect.Effect<Recorder> =>
  Effect.map(Deferred.make<void>(), (allStartedSignal) => {
    const startsPerJob = new Uint32Array(expectedJobs)
    const firstDelayMs = new Float64Array(expectedJobs)
    let distinct = 0
    let unknown = 0
    let lastFirstStartAt = Number.NaN

    const record = (payload: JobPayload): void => {
      const startedAt = Date.now()
      const { n } = payload
      if (!Number.isInteger(n) || n < 0 || n >= expectedJobs) {
        unknown += 1
        return
      }
      startsPerJob[n] = (startsPerJob[n] ?? 0) + 1
      if (startsPerJob[n] !== 1) return
      firstDelayMs[n] = startedAt - payload.enqueuedAt
      distinct += 1
      lastFirstStartAt = startedAt
      if (distinct === expectedJobs) Deferred.unsafeDone(allStartedSignal, Exit.void)
    }

    const observe = (): Observations => {
      let starts = 0
      const delays = new Float64Array(distinct)
      let next = 0
      startsPerJob.forEach((count, n) => {
        starts += count
        if (count > 0) delays[next++] = firstDelayMs[n] ?? Number.NaN
      })
      delays.sort()
      return {
        distinct,
        duplicates: starts - distinct,
        missing: expectedJobs - distinct,
        unknown,
        lastFirstStartAt,
        delayP50Ms: percentileOfSorted(delays, 50),
        delayP99Ms: percentileOfSorted(delays, 99)
      }
    }

    return {
      record,
      distinctSoFar: () => distinct,
      allStarted: Deferred.await(allStartedSignal),
      observe
    }
  })
