import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { Schema } from "effect"

const FormValue = Schema.optional(Schema.String)

/**
 * The form of `POST /token` (and its aliases): `application/x-www-form-urlencoded`. Which fields a request needs
 * depends on its `grant_type`; the service names the one that is missing. Client credentials go in the body or in
 * HTTP Basic, not both.
 */
export const TokenForm = Schema.Struct({
  grant_type: FormValue,
  code: FormValue,
  redirect_uri: FormValue,
  code_verifier: FormValue,
  refresh_token: FormValue,
  client_id: FormValue,
  client_secret: FormValue
}).pipe(HttpApiSchema.withEncoding({ kind: "UrlParams" }))
export type TokenForm = typeof TokenForm.Type

/** `POST /oauth/revoke` (RFC 7009) and `POST /oauth/introspect` (RFC 7662). */
export const TokenQueryForm = Schema.Struct({
  token: FormValue,
  token_type_hint: FormValue,
  client_id: FormValue,
  client_secret: FormValue
}).pipe(HttpApiSchema.withEncoding({ kind: "UrlParams" }))
export type TokenQueryForm = typeof TokenQueryForm.Type

export const TokenResponse = Schema.Struct({
  access_token: Schema.String,
  token_type: Schema.Literal("Bearer"),
  expires_in: Schema.Number,
  refresh_token: Schema.String,
  /** When the token was issued, in seconds since the epoch (as Doorkeeper answers). */
  created_at: Schema.Number,
  scope: Schema.optional(Schema.String),
  id_token: Schema.optional(Schema.String)
})
export type TokenResponse = typeof TokenResponse.Type

export const IntrospectionResponse = Schema.Struct({
  active: Schema.Boolean,
  client_id: Schema.optional(Schema.String),
  username: Schema.optional(Schema.String),
  sub: Schema.optional(Schema.String),
  scope: Schema.optional(Schema.String),
  token_type: Schema.optional(Schema.Literal("Bearer", "refresh_token")),
  exp: Schema.optional(Schema.Number),
  iat: Schema.optional(Schema.Number),
  iss: Schema.optional(Schema.String)
})
export type IntrospectionResponse = typeof IntrospectionResponse.Type

/** RFC 8414 metadata of the authorization server. */
export const ServerMetadata = Schema.Struct({
  issuer: Schema.String,
  authorization_endpoint: Schema.String,
  token_endpoint: Schema.String,
  revocation_endpoint: Schema.String,
  introspection_endpoint: Schema.String,
  jwks_uri: Schema.String,
  response_types_supported: Schema.Array(Schema.String),
  response_modes_supported: Schema.Array(Schema.String),
  grant_types_supported: Schema.Array(Schema.String),
  token_endpoint_auth_methods_supported: Schema.Array(Schema.String),
  revocation_endpoint_auth_methods_supported: Schema.Array(Schema.String),
  introspection_endpoint_auth_methods_supported: Schema.Array(Schema.String),
  code_challenge_methods_supported: Schema.Array(Schema.String),
  scopes_supported: Schema.Array(Schema.String),
  authorization_response_iss_parameter_supported: Schema.Boolean
})
export type ServerMetadata = typeof ServerMetadata.Type

/** OpenID Connect Discovery 1.0: the RFC 8414 metadata with the OpenID Provider's own fields. */
export const OpenIdConfiguration = Schema.Struct({
  ...ServerMetadata.fields,
  userinfo_endpoint: Schema.String,
  subject_types_supported: Schema.Array(Schema.String),
  id_token_signing_alg_values_supported: Schema.Array(Schema.String),
  claims_supported: Schema.Array(Schema.String)
})
export type OpenIdConfiguration = typeof OpenIdConfiguration.Type

/** The public keys that sign id_tokens (RFC 7517). */
export const JsonWebKeySet = Schema.Struct({
  keys: Schema.Array(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
})

/** OpenID Connect userinfo: `sub`, and `name` and `email` when the token's scopes release them. */
export const UserInfo = Schema.Struct({
  sub: Schema.String,
  name: Schema.optional(Schema.String),
  email: Schema.optional(Schema.String)
})

/** `GET /user.json`: the user, with the calling application's permissions only, sorted, and the token's time left. */
export const ClientUser = Schema.Struct({
  user: Schema.Struct({
    uid: Schema.String,
    name: Schema.String,
    email: Schema.String,
    permissions: Schema.Array(Schema.String),
    organisation_slug: Schema.NullOr(Schema.String),
    organisation_content_id: Schema.NullOr(Schema.String),
    disabled: Schema.Boolean
  }),
  /** Seconds the token has left: a resource server's cached acceptance must not outlive it. */
  expires_in: Schema.optional(Schema.Number)
})
export type ClientUser = typeof ClientUser.Type

export const UserJsonParams = Schema.Struct({
  /** When given, it must be the client id of the application the token was issued to. */
  client_id: Schema.optional(Schema.String)
})
