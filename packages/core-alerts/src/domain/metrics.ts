import { Metric } from "effect"

/**
 * What became of each email the provider was given: `sent`, `retrying` (a temporary failure), `failed` (for good, or
 * out of attempts) or `sender_refused` (the provider refused the service as a sender: delivery pauses).
 */
export const emailAttempts = Metric.counter("alerts_email_attempts", {
  description: "Emails handed to the provider, by outcome",
  incremental: true
})

/** Emails written by fan-out jobs (one per subscriber of a notification) and by digest runs, by `kind`. */
export const emailsQueued = Metric.counter("alerts_emails_queued", {
  description: "Emails queued by fan-outs and digest runs, by kind",
  incremental: true
})

/** Fan-out jobs and digest runs done, by `kind`. */
export const jobsDone = Metric.counter("alerts_jobs_done", {
  description: "Fan-out jobs and digest runs done, by kind",
  incremental: true
})

/** Auth-token requests refused with 429, by the `limit` they met (`address` or `caller`). */
export const authTokensThrottled = Metric.counter("alerts_auth_tokens_throttled", {
  description: "Auth-token requests refused with 429, by the limit they met",
  incremental: true
})

/** Reports providers made about emails after taking them, by `source`, `status` and `outcome` (recorded, repeated, unknown). */
export const deliveryReportsReceived = Metric.counter("alerts_delivery_reports", {
  description: "Delivery reports received (Notify status callbacks, SMTP bounces), by source, status and outcome",
  incremental: true
})
