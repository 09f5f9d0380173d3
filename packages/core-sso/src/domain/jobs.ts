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

/**
 * One email with a one-time link: an invitation to a user, or a password reset asked for an address. The link is made
 * when the email is sent, so that no working link waits in the queue; a reset for an address no user has sends
 * nothing, which the person who asked is not told.
 */
export const emailLinkJob = JobDefinition.make({
  queue: "sso.email",
  payload: Schema.Union(
    Schema.Struct({ purpose: Schema.Literal("invitation"), userUid: Schema.String }),
    Schema.Struct({ purpose: Schema.Literal("password_reset"), email: Schema.String })
  ),
  maxAttempts: 8,
  backoff: { base: "30 seconds", max: "30 minutes" }
})

/** While one email of a kind to a person waits, asking again joins it rather than sending a second. */
export const emailLinkDedupeKey = (payload: typeof emailLinkJob.payload.Type) =>
  payload.purpose === "invitation"
    ? `sso-email:invitation:${payload.userUid}`
    : `sso-email:password_reset:${payload.email.trim().toLowerCase()}`
