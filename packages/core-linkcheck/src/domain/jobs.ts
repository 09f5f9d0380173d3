import { JobDefinition } from "@civicstack/jobs"
import { Schema } from "effect"

/**
 * Delivers the completion webhook of one batch; retried with growing delays on failures worth retrying. Enqueued
 * where batches complete (`services/completion.ts`); the webhook sender (`workers/webhookSender.ts`) runs it.
 */
export const webhookDeliveryJob = JobDefinition.make({
  queue: "linkcheck.webhook",
  payload: Schema.Struct({ batchId: Schema.Int }),
  maxAttempts: 5,
  backoff: { base: "10 seconds", max: "30 minutes" }
})

export const webhookDedupeKey = (batchId: number) => `linkcheck-batch-${batchId}`
