import { eventCounter } from "@civicstack/kit"

/**
 * What became of each email the provider was given: `sent`, `retrying` (a temporary failure), `failed` (for good, or
 * out of attempts) or `sender_refused` (the provider refused the service as a sender: delivery pauses).
 */
export const emailAttempts = eventCounter("alerts_email_attempts", "Emails handed to the provider, by outcome")

/** Emails written by fan-out jobs (one per subscriber of a notification) and by digest runs, by `kind`. */
export const emailsQueued = eventCounter("alerts_emails_queued", "Emails queued by fan-outs and digest runs, by kind")

/** Fan-out jobs and digest runs done, by `kind`. */
export const jobsDone = eventCounter("alerts_jobs_done", "Fan-out jobs and digest runs done, by kind")

/** Auth-token requests refused with 429, by the `limit` they met (`address` or `caller`). */
export const authTokensThrottled = eventCounter(
  "alerts_auth_tokens_throttled",
  "Auth-token requests refused with 429, by the limit they met"
)

/** Reports providers made about emails after taking them, by `source`, `status` and `outcome` (recorded, repeated, unknown). */
export const deliveryReportsReceived = eventCounter(
  "alerts_delivery_reports",
  "Delivery reports received (Notify status callbacks, SMTP bounces), by source, status and outcome"
)
