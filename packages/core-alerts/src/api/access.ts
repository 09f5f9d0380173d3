import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import { Schema } from "effect"

/** 401: no bearer token, or one the single sign-on does not accept for this API. */
export class Unauthenticated extends Schema.TaggedError<Unauthenticated>()("Unauthenticated", {
  error: Schema.String
}) {}

/** 403: the token's user may not use this API (no `signin` on `email-alert-api`). */
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", {
  error: Schema.String
}) {}

const envelope = <Self extends Unauthenticated | Forbidden>(
  error: new(fields: { readonly error: string }) => Self,
  status: number
) =>
  Schema.transform(Schema.Struct({ error: Schema.String }), Schema.declare((value): value is Self => value instanceof error), {
    strict: true,
    decode: (body) => new error(body),
    encode: (refusal) => ({ error: refusal.error })
  }).annotations(HttpApiSchema.annotations({ status }))

export const UnauthenticatedResponse = envelope(Unauthenticated, 401)
export const ForbiddenResponse = envelope(Forbidden, 403)

/**
 * Who may use the email alert API: a bearer token whose user has `signin` on the `email-alert-api` application of
 * the single sign-on. The host provides it (the reference server checks tokens in-process; an embedder can use
 * sdk-sso's guard against a remote SSO, or `layerOpenAccess` behind an access check of its own). `/healthcheck` is
 * open.
 */
export class AlertsAccess extends HttpApiMiddleware.Tag<AlertsAccess>()("@civicstack/core-alerts/AlertsAccess", {
  failure: Schema.Union(UnauthenticatedResponse, ForbiddenResponse),
  security: { bearer: HttpApiSecurity.bearer }
}) {}

/** The application of the single sign-on whose `signin` permission lets a user call the email alert API. */
export const ALERTS_APPLICATION = "email-alert-api"
