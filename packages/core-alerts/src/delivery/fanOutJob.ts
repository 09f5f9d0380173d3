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
