import { Schema } from "effect"

/**
 * The SSO could not be reached (`Transport`), or it answered with something its contract does not allow
 * (`UnexpectedResponse`: a status it never declares, such as 500 or 503, or a body of the wrong shape).
 */
export class SsoClientError extends Schema.TaggedError<SsoClientError>()("SsoClientError", {
  reason: Schema.Literal("Transport", "UnexpectedResponse"),
  message: Schema.String,
  status: Schema.optional(Schema.Int),
  cause: Schema.optional(Schema.Defect)
}) {}

/**
 * The redirect back from the SSO cannot be trusted or carries no code: `MissingState` / `StateMismatch` (a forged
 * or replayed callback, or a session that lost its state), `AuthorizationRefused` (the SSO sent `error`, with its
 * `error_description`), `MissingCode`.
 */
export class OAuthCallbackError extends Schema.TaggedError<OAuthCallbackError>()("OAuthCallbackError", {
  reason: Schema.Literal("MissingState", "StateMismatch", "AuthorizationRefused", "MissingCode"),
  message: Schema.String,
  error: Schema.optional(Schema.String),
  errorDescription: Schema.optional(Schema.String)
}) {}

/**
 * A bearer token was refused by the guard: `MissingToken` and `InvalidToken` answer 401, `MissingPermission` 403,
 * `SsoUnavailable` 503 (the SSO could not be asked, so the token is neither accepted nor refused).
 */
export class TokenRefused extends Schema.TaggedError<TokenRefused>()("TokenRefused", {
  reason: Schema.Literal("MissingToken", "InvalidToken", "MissingPermission", "SsoUnavailable"),
  message: Schema.String
}) {
  get status(): 401 | 403 | 503 {
    switch (this.reason) {
      case "MissingToken":
      case "InvalidToken":
        return 401
      case "MissingPermission":
        return 403
      case "SsoUnavailable":
        return 503
    }
  }
}
