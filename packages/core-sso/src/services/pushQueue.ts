import { JobQueue } from "@civicstack/jobs"
import type { JobQueueError } from "@civicstack/jobs"
import { Effect, Option } from "effect"
import { pushDedupeKey, pushDeliveryJob } from "../domain/jobs"
import type { PushKind } from "../domain/pushes"
import type { Application } from "../domain/records"
import { SsoParts } from "./SsoParts"

/**
 * Queues pushes of a user's change to every application that takes pushes and was ever issued a token for them.
 * Called inside the transaction of the change, so the change and its pushes are kept or lost together.
 */
export const enqueuePushes = (userUid: string, kinds: ReadonlyArray<PushKind>, only?: (application: Application) => boolean) =>
  Effect.gen(function*() {
    const { jobs, store } = yield* SsoParts
    for (const applicationId of yield* store.applicationsUsedBy(userUid)) {
      const application = yield* store.applicationById(applicationId)
      if (Option.isNone(application) || !application.value.pushUpdates || application.value.retired) continue
      if (only !== undefined && !only(application.value)) continue
      for (const kind of kinds) {
        const payload = { kind, userUid, applicationId }
        yield* jobs.enqueue(pushDeliveryJob, payload, { dedupeKey: pushDedupeKey(payload) })
      }
    }
  })

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
  const stats = (yield* jobs.stats).find((each) => each.queue === pushDeliveryJob.queue)
  return stats === undefined
    ? { waiting: 0, sending: 0, failed: 0, oldestDueAgeMs: null }
    : {
      waiting: stats.queued + stats.scheduled,
      sending: stats.running,
      failed: stats.dead,
      oldestDueAgeMs: stats.oldestRunnableAgeMs
    }
})
