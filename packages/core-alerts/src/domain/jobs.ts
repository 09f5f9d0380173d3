import { JobDefinition } from "@civicstack/jobs"
import { Schema } from "effect"

/** Turns one recorded notification into emails (immediate) and digest entries; enqueued with the notification. */
export const fanOutJob = JobDefinition.make({
  queue: "alerts.fan-out",
  payload: Schema.Struct({ notificationId: Schema.UUID }),
  maxAttempts: 25,
  backoff: { base: "1 second", max: "5 minutes" },
  leaseDuration: "2 minutes"
})

const Frequency = Schema.Literal("daily", "weekly")

/** Sends the digests of the window that ended last (at 08:00); enqueued by the digest schedules at 08:30. */
export const digestJob = JobDefinition.make({
  queue: "alerts.digest",
  payload: Schema.Struct({ frequency: Frequency }),
  maxAttempts: 25,
  backoff: { base: "5 seconds", max: "10 minutes" },
  leaseDuration: "5 minutes"
})

/**
 * What the job queue signals (`JobQueue.signal`) when emails are queued, by fan-out, digests or a request: the
 * delivery workers of every copy wake at once instead of at their next poll.
 */
export const EMAILS_QUEUED_SIGNAL = "alerts.emails-queued"
