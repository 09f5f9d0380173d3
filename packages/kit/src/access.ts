import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import { Context, Effect, Layer, Schema } from "effect"

/** A JSON body declared with `charset=utf-8`, as the services answer. */
export const json = <A, I, R>(schema: Schema.Schema<A, I, R>) =>
  schema.pipe(HttpApiSchema.withEncoding({ kind: "Json", contentType: "application/json; charset=utf-8" }))

/**
 * A JSON answer for an endpoint that sends one body under two statuses (such as 201 created and 200 found): the
 * `outcome` marker tells the two apart in handlers and clients, and never reaches the wire.
 */
export const jsonWithOutcome = <A extends object, I, R, const Outcome extends string>(
  schema: Schema.Schema<A, I, R>,
  outcome: Outcome
) => json(schema.pipe(Schema.attachPropertySignature("outcome", outcome)))

/** 401: no bearer token, or one the single sign-on does not accept for this API. */
export class Unauthenticated extends Schema.TaggedError<Unauthenticated>()("Unauthenticated", {
  error: Schema.String
}) {}

/** 403: the token's user may not use this API (no `signin` on the API's application). */
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", {
  error: Schema.String
}) {}

/**
 * A tagged error as its answer: `status`, and a JSON body of `fields` read from the error. The tag lives on the
 * TypeScript side only, so a client decodes the typed error from the status code and the body. `decode` builds the
 * error from the body where its class has fields the body does not carry.
 */
export const errorAnswer = <Fields extends Schema.Struct.Fields, Self>(
  errorClass: Schema.Schema<Self, any>,
  fields: Fields,
  status: number,
  decode: (body: Schema.Struct.Type<Fields>) => Self = (body) =>
    new (errorClass as unknown as new(body: Schema.Struct.Type<Fields>) => Self)(body)
) =>
  Schema.transform(Schema.Struct(fields), Schema.typeSchema(errorClass), {
    strict: true,
    decode: (body) => decode(body as Schema.Struct.Type<Fields>),
    encode: (error) =>
      Object.fromEntries(
        Object.keys(fields).flatMap((key) => {
          const value = (error as Record<string, unknown>)[key]
          return value === undefined ? [] : [[key, value]]
        })
      ) as Schema.Struct.Type<typeof fields>
  }).annotations(HttpApiSchema.annotations({ status }))

export const UnauthenticatedResponse = errorAnswer(Unauthenticated, { error: Schema.String }, 401)
export const ForbiddenResponse = errorAnswer(Forbidden, { error: Schema.String }, 403)

/**
 * Who called: the single sign-on user (person or API user) the bearer token belongs to, and their permissions on the
 * service's application. A service's handlers read it to tell callers apart, for ownership and per-caller limits.
 */
export class Caller extends Context.Tag("@civicstack/kit/Caller")<Caller, {
  readonly uid: string
  readonly permissions: ReadonlyArray<string>
}>() {}

/** The permission on a service's application that lets its holder see what every caller made, not only their own. */
export const ADMIN_PERMISSION = "admin"

/** Whether the caller holds `ADMIN_PERMISSION`. */
export const isAdmin = (caller: Context.Tag.Service<Caller>) => caller.permissions.includes(ADMIN_PERMISSION)

/** The caller `openAccess` lets in: one caller for every request, who sees everything. */
export const OPEN_CALLER: Context.Tag.Service<Caller> = { uid: "open", permissions: ["signin", ADMIN_PERMISSION] }

const accessOptions = {
  failure: Schema.Union(UnauthenticatedResponse, ForbiddenResponse),
  provides: Caller,
  security: { bearer: HttpApiSecurity.bearer }
} as const

/**
 * The middleware tag of who may call a service's API: a bearer token, refused with 401 or 403. The host provides it
 * (the reference server checks single sign-on tokens in-process; an embedder can use sdk-sso's guard, or
 * `openAccess` behind a check of its own).
 */
export const ApiAccess = <Self>() => <const Id extends string>(id: Id) =>
  HttpApiMiddleware.Tag<Self>()(id, accessOptions)

/** The checks an `ApiAccess` tag stands for: a bearer token accepted names its `Caller`. */
export type AccessCheck = HttpApiMiddleware.HttpApiMiddlewareSecurity<
  typeof accessOptions.security,
  Context.Tag.Service<Caller>,
  Unauthenticated | Forbidden
>

/**
 * Lets every caller use the API as `caller` (by default `OPEN_CALLER`, who sees everything): for a host that checks
 * its callers itself, in front of the handlers.
 */
export const openAccess = <Self>(
  tag: Context.Tag<Self, AccessCheck>,
  caller: Context.Tag.Service<Caller> = OPEN_CALLER
): Layer.Layer<Self> => Layer.succeed(tag, { bearer: () => Effect.succeed(caller) })
