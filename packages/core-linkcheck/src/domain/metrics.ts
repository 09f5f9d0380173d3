import { Metric } from "effect"

/** Checks whose results were recorded, by the link's status (`ok`, `caution`, `broken`, `danger`). */
export const checksCompleted = Metric.counter("linkcheck_checks_completed", {
  description: "Link checks completed, by the link's status",
  incremental: true
})

/** Webhook attempts by outcome: `delivered`, `refused` (an answer that ends it), `retrying` or `failed`. */
export const webhookAttempts = Metric.counter("linkcheck_webhook_attempts", {
  description: "Webhook attempts, by outcome",
  incremental: true
})
