import { errorAnswer } from "@civicstack/kit/access"
import { Schema } from "effect"

/** The error codes of RFC 6749 section 5.2 that the token, revoke and introspect endpoints answer with. */
export const OAuthErrorCode = Schema.Literal(
  "invalid_request",
  "invalid_client",
  "invalid_grant",
  "unauthorized_client",
  "unsupported_grant_type",
  "unsupported_token_type",
  "invalid_scope",
  "slow_down"
)
export type OAuthErrorCode = typeof OAuthErrorCode.Type

const OAuthErrorFields = { error: OAuthErrorCode, error_description: Schema.String }

/** 400: a parameter is missing or wrong, the grant is invalid, or the grant type is not supported. */
export class OAuthRequestRefused extends Schema.TaggedError<OAuthRequestRefused>()("OAuthRequestRefused", OAuthErrorFields) {}

/** 401 with `WWW-Authenticate: Basic`: the client could not be authenticated. */
export class OAuthClientRefused extends Schema.TaggedError<OAuthClientRefused>()("OAuthClientRefused", OAuthErrorFields) {}

/** 429 with `Retry-After`: too many failed client authentications from this client or address. */
export class OAuthThrottled extends Schema.TaggedError<OAuthThrottled>()("OAuthThrottled", {
  ...OAuthErrorFields,
  retry_after_seconds: Schema.Number
}) {}

const InvalidTokenFields = { error: Schema.Literal("invalid_token"), error_description: Schema.String }

/** 401 with `WWW-Authenticate: Bearer error="invalid_token"`: no usable access token. */
export class InvalidToken extends Schema.TaggedError<InvalidToken>()("InvalidToken", InvalidTokenFields) {}

/** 400: a request to the JSON API the service cannot act on. Nothing was changed. */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", {
  error: Schema.String,
  details: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
}) {}

export const OAuthRequestRefusedResponse = errorAnswer(OAuthRequestRefused, OAuthErrorFields, 400)
export const OAuthClientRefusedResponse = errorAnswer(OAuthClientRefused, OAuthErrorFields, 401)
export const OAuthThrottledResponse = errorAnswer(
  OAuthThrottled,
  OAuthErrorFields,
  429,
  (body) => new OAuthThrottled({ ...body, retry_after_seconds: 0 })
)
export const InvalidTokenResponse = errorAnswer(InvalidToken, InvalidTokenFields, 401)
