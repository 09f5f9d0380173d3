import { JobQueue } from "@civicstack/jobs"
import { Effect, Layer } from "effect"
import { StoreError } from "../storage/AlertsStore"
import { EmailQueue } from "./EmailQueue"
import { EmailStore } from "./EmailStore"
import { digestJob } from "./digest"
import { fanOutJob } from "./fanOutJob"

/** Jobs that turn into emails, so they count in the queue's size. */
const EMAIL_MAKING_QUEUES: ReadonlySet<string> = new Set([fanOutJob.queue, digestJob.queue])

/**
 * The `EmailQueue` the request side uses: a single email is a pending row; the size is the emails waiting plus the
 * fan-out and digest jobs not yet done (runnable, waiting for a retry, or running).
 */
export const emailQueueFromStore: Layer.Layer<EmailQueue, never, EmailStore | JobQueue> = Layer.effect(
  EmailQueue,
  Effect.gen(function*() {
    const emails = yield* EmailStore
    const jobs = yield* JobQueue
    const jobsWaiting = jobs.stats.pipe(
      Effect.map((stats) =>
        stats
          .filter((queue) => EMAIL_MAKING_QUEUES.has(queue.queue))
          .reduce((sum, queue) => sum + queue.queued + queue.scheduled + queue.running, 0)
      ),
      Effect.mapError((cause) => new StoreError({ message: "alerts email queue: job figures failed", cause }))
    )
    return {
      queue: (email) => Effect.asVoid(emails.queueEmail(email)),
      figures: Effect.map(
        Effect.all([emails.figures, jobsWaiting]),
        ([figures, jobCount]) => ({
          size: figures.waiting + jobCount,
          oldestImmediatePendingSince: figures.oldestImmediatePendingSince
        })
      )
    }
  })
)
