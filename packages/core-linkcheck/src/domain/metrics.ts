import { eventCounter } from "@civicstack/kit"

/** Checks whose results were recorded, by the link's status (`ok`, `caution`, `broken`, `danger`). */
export const checksCompleted = eventCounter("linkcheck_checks_completed", "Link checks completed, by the link's status")

/** Webhook attempts by outcome: `delivered`, `refused` (an answer that ends it), `retrying` or `failed`. */
export const webhookAttempts = eventCounter("linkcheck_webhook_attempts", "Webhook attempts, by outcome")
