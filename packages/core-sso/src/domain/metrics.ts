import { Metric } from "effect"

/** Sign-in steps (`password`, `second_step`) by outcome: `succeeded`, `refused` or `throttled`. */
export const signIns = Metric.counter("sso_sign_ins", {
  description: "Sign-in steps, by step and outcome",
  incremental: true
})

/** Token requests by `grant_type` and outcome: `granted`, the OAuth error code, or `throttled`. */
export const tokenGrants = Metric.counter("sso_token_grants", {
  description: "Token requests, by grant type and outcome",
  incremental: true
})

/** Push attempts to applications by outcome: `delivered`, `refused` (an answer that ends it), `retrying` or `failed`. */
export const pushAttempts = Metric.counter("sso_push_attempts", {
  description: "Pushes of user changes to applications, by outcome",
  incremental: true
})
