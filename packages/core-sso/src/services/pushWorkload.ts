import { JobQueue } from "@civicstack/jobs"
import type { JobQueueError } from "@civicstack/jobs"
import { Effect } from "effect"
import { PushDelivery } from "./pushJob"

/** The pushes to applications that wait, are being sent, or gave up after their last retry. */
export interface PushWorkload {
  /** Due now or waiting for a retry. */
  readonly waiting: number
  readonly sending: number
  readonly failed: number
  /** Milliseconds since the oldest push due now became due; null when none is. */
  readonly oldestDueAgeMs: number | null
}

/** The push backlog in the host's job queue, for health pages. */
export const pushWorkload: Effect.Effect<PushWorkload, JobQueueError, JobQueue> = Effect.gen(function*() {
  const jobs = yield* JobQueue
  const stats = (yield* jobs.stats).find((each) => each.queue === PushDelivery.queue)
  return stats === undefined
    ? { waiting: 0, sending: 0, failed: 0, oldestDueAgeMs: null }
    : {
      waiting: stats.queued + stats.scheduled,
      sending: stats.running,
      failed: stats.dead,
      oldestDueAgeMs: stats.oldestRunnableAgeMs
    }
})
