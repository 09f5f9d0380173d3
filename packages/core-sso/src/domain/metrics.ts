import { eventCounter } from "@civicstack/kit"

/** Sign-in steps (`password`, `second_step`) by outcome: `succeeded`, `refused` or `throttled`. */
export const signIns = eventCounter("sso_sign_ins", "Sign-in steps, by step and outcome")

/** Token requests by `grant_type` and outcome: `granted`, the OAuth error code, or `throttled`. */
export const tokenGrants = eventCounter("sso_token_grants", "Token requests, by grant type and outcome")

/** Push attempts to applications by outcome: `delivered`, `refused` (an answer that ends it), `retrying` or `failed`. */
export const pushAttempts = eventCounter("sso_push_attempts", "Pushes of user changes to applications, by outcome")
