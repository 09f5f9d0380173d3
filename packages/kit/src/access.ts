import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import { type Context, Effect, Layer, Schema } from "effect"

/** 401: no bearer token, or one the single sign-on does not accept for this API. */
export class Unauthenticated extends Schema.TaggedError<Unauthenticated>()("Unauthenticated", {
  error: Schema.String
}) {}

/** 403: the token's user may not use this API (no `signin` on the API's application). */
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

const accessOptions = {
  failure: Schema.Union(UnauthenticatedResponse, ForbiddenResponse),
  security: { bearer: HttpApiSecurity.bearer }
} as const

/**
 * The middleware tag of who may call a service's API: a bearer token, refused with 401 or 403. The host provides it
 * (the reference server checks single sign-on tokens in-process; an embedder can use sdk-sso's guard, or
 * `openAccess` behind a check of its own).
 */
export const ApiAccess = <Self>() => <const Id extends string>(id: Id) =>
  HttpApiMiddleware.Tag<Self>()(id, accessOptions)

/** The checks an `ApiAccess` tag stands for. */
export type AccessCheck = HttpApiMiddleware.HttpApiMiddlewareSecurity<
  typeof accessOptions.security,
  void,
  Unauthenticated | Forbidden
>

/** Lets every caller use the API: for a host that checks its callers itself, in front of the handlers. */
export const openAccess = <Self>(tag: Context.Tag<Self, AccessCheck>): Layer.Layer<Self> =>
  Layer.succeed(tag, { bearer: () => Effect.void })
