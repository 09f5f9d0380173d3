import { Array, Clock, Effect } from "effect"
import type { BenchError } from "./benchError"
import type { JobPayload } from "./payload"

/** Enqueues jobs 0..jobs-1 one call each, with at most `concurrency` calls in flight. */
export const enqueueOneByOne = (
  jobs: number,
  concurrency: number,
  enqueue: (payload: JobPayload) => Effect.Effect<void, BenchError>
) =>
  Effect.forEach(
    Array.range(0, jobs - 1),
    (n) => Effect.flatMap(Clock.currentTimeMillis, (enqueuedAt) => enqueue({ n, enqueuedAt })),
    { concurrency, discard: true }
  )

/** Enqueues jobs 0..jobs-1 in consecutive bulk calls of `bulkSize` jobs, one call at a time. */
export const enqueueInBulk = (
  jobs: number,
  bulkSize: number,
  enqueueBulk: (payloads: ReadonlyArray<JobPayload>) => Effect.Effect<void, BenchError>
) =>
  Effect.forEach(
    Array.chunksOf(Array.range(0, jobs - 1), bulkSize),
    (numbers) =>
      Effect.flatMap(Clock.currentTimeMillis, (enqueuedAt) =>
        enqueueBulk(numbers.map((n) => ({ n, enqueuedAt })))),
    { discard: true }
  )
