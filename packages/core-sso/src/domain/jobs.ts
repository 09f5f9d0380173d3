import { JobDefinition } from "@civicstack/jobs"
import { Schema } from "effect"

/**
 * One push of a user's state to one application. The payload names the user, not their state: the state is read
 * when the push is sent, so the latest state is what arrives.
 */
export const pushDeliveryJob = JobDefinition.make({
  queue: "sso.push",
  payload: Schema.Struct({
    kind: Schema.Literal("update", "reauth"),
    userUid: Schema.String,
    applicationId: Schema.String
  }),
  maxAttempts: 6,
  backoff: { base: "15 seconds", max: "1 hour" }
})

/** While a push of this kind for this pair waits, another change joins it rather than queueing a second. */
export const pushDedupeKey = (payload: typeof pushDeliveryJob.payload.Type) =>
  `sso-push:${payload.kind}:${payload.applicationId}:${payload.userUid}`
