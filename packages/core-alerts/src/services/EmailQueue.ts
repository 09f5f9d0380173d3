import { JobQueue } from "@civicstack/jobs"
import { StoreError } from "@civicstack/kit"
import { Context, Effect, Layer } from "effect"
import { digestJob, EMAILS_QUEUED_SIGNAL, fanOutJob } from "../domain/jobs"
import { EmailStore } from "../storage/EmailStore"
import type { SingleEmail } from "../storage/EmailStore"

export type { SingleEmail }

export interface QueueFigures {
  /** Emails waiting to be sent (pending or being sent) plus fan-out and digest jobs not yet done. */
  readonly size: number
  /** When the oldest pending email for an immediate subscriber (or a single email) was queued; null when none. */
  readonly oldestImmediatePendingSince: Date | null
}

/** Jobs that turn into emails, so they count in the queue's size. */
/** Wakes the delivery workers of every copy; they poll all the same, so a signal that fails only delays delivery. */
export const signalEmailsQueued = (jobs: Context.Tag.Service<JobQueue>) =>
  jobs.signal(EMAILS_QUEUED_SIGNAL).pipe(
    Effect.catchAll((error) => Effect.logWarning("Could not wake the delivery workers of other copies", error))
  )

const EMAIL_MAKING_QUEUES: ReadonlySet<string> = new Set([fanOutJob.queue, digestJob.queue])

/**
 * The email side of the service as the request side needs it. Inside a `AlertsStore.transaction` on SQL, `queue`
 * joins that transaction.
 */
export class EmailQueue extends Context.Tag("@civicstack/core-alerts/EmailQueue")<EmailQueue, {
  readonly queue: (email: SingleEmail) => Effect.Effect<void, StoreError>
  /** The emails of this subject queued to `address` after `since`: how many, and when the oldest was. */
  readonly queuedSince: (
    address: string,
    subject: string,
    since: Date
  ) => Effect.Effect<{ readonly count: number; readonly oldest: Date | null }, StoreError>
  readonly figures: Effect.Effect<QueueFigures, StoreError>
}>() {
  /**
   * The queue over the email store: a single email is a pending row; the size is the emails waiting plus the fan-out
   * and digest jobs not yet done (runnable, waiting for a retry, or running).
   */
  static readonly layer: Layer.Layer<EmailQueue, never, EmailStore | JobQueue> = Layer.effect(
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
        queue: (email) => Effect.zipRight(emails.queueEmail(email), signalEmailsQueued(jobs)),
        queuedSince: emails.singleEmailsSince,
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
}
