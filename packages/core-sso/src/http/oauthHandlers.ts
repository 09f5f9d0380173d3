import type * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Effect, Either, Schema } from "effect"
import type { InvalidToken, OAuthClientRefused, OAuthRequestRefused, OAuthThrottled } from "../api/errors"
import { TokenForm, TokenQueryForm } from "../api/oauth"
import type { AdminGroup } from "../api/admin"
import type { BrowserGroup, OAuthGroup } from "../api/SsoApi"
import { OAuthServer } from "../services/OAuthServer"
import { SsoParts } from "../services/SsoParts"
import { clientAddress, header, readForm } from "./requests"

/** Token responses and errors are never cached (RFC 6749 section 5.1). */
const NO_STORE = { "cache-control": "no-store", pragma: "no-cache" }

const oauthJson = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  HttpServerResponse.unsafeJson(body, { status, headers: { ...NO_STORE, ...headers } })

const invalidRequest = (description: string) =>
  oauthJson({ error: "invalid_request", error_description: description }, 400)

const oauthError = (error: OAuthRequestRefused | OAuthClientRefused | OAuthThrottled) => {
  const body = { error: error.error, error_description: error.error_description }
  switch (error._tag) {
    case "OAuthRequestRefused":
      return oauthJson(body, 400)
    case "OAuthClientRefused":
      return oauthJson(body, 401, { "www-authenticate": `Basic realm="civicstack", charset="UTF-8"` })
    case "OAuthThrottled":
      return oauthJson(body, 429, { "retry-after": String(error.retry_after_seconds) })
  }
}

/** `WWW-Authenticate` of RFC 6750 section 3, its description made safe for a quoted string. */
const invalidTokenResponse = (error: InvalidToken) =>
  HttpServerResponse.unsafeJson(
    { error: error.error, error_description: error.error_description },
    {
      status: 401,
      headers: {
        "www-authenticate": `Bearer realm="civicstack", error="invalid_token", error_description="${
          error.error_description.replace(/["\\]/g, "")
        }"`,
        "cache-control": "no-store"
      }
    }
  )

/**
 * The form endpoints read their body themselves, so that any problem with it is answered in RFC 6749's shape
 * rather than the JSON API's envelope.
 */
const formEndpoint = <F, A>(
  schema: Schema.Schema<F, any>,
  run: (form: F, origin: { readonly address: string; readonly authorization: string | undefined }) => Effect.Effect<
    A,
    OAuthRequestRefused | OAuthClientRefused | OAuthThrottled,
    never
  >,
  trustProxy: boolean
) =>
({ request }: { readonly request: HttpServerRequest.HttpServerRequest }) =>
  Effect.gen(function*() {
    const read = yield* readForm(request)
    if (Either.isLeft(read)) return invalidRequest(read.left.description)
    const form = Schema.decodeUnknownEither(schema)(read.right)
    if (Either.isLeft(form)) return invalidRequest("The parameters could not be read")
    const origin = { address: clientAddress(request, trustProxy), authorization: header(request, "authorization") }
    return yield* run(form.right, origin).pipe(
      Effect.map((body) => oauthJson(body)),
      Effect.catchAll((error) => Effect.succeed(oauthError(error)))
    )
  })

/** The handlers of the OAuth 2 endpoints, for an HttpApi that includes `OAuthGroup` under the host's identifier. */
export const oauthHandlers = <ApiId extends string, E, R>(
  api: HttpApi.HttpApi<ApiId, typeof OAuthGroup | typeof BrowserGroup | typeof AdminGroup, E, R>
) =>
  HttpApiBuilder.group(api, "oauth", (handlers) =>
    Effect.gen(function*() {
      const server = yield* OAuthServer
      const { settings } = yield* SsoParts
      const exchange = formEndpoint(
        TokenForm,
        (form, origin) => server.exchange(form, origin).pipe(Effect.catchTag("StoreError", Effect.die)),
        settings.trustProxy
      )
      return handlers
        .handleRaw("token", exchange)
        .handleRaw("oauthToken", exchange)
        .handleRaw("accessToken", exchange)
        .handleRaw("revoke", formEndpoint(
          TokenQueryForm,
          (form, origin) => server.revoke(form, origin).pipe(Effect.as({}), Effect.catchTag("StoreError", Effect.die)),
          settings.trustProxy
        ))
        .handleRaw("introspect", formEndpoint(
          TokenQueryForm,
          (form, origin) => server.introspect(form, origin).pipe(Effect.catchTag("StoreError", Effect.die)),
          settings.trustProxy
        ))
        .handle("user", ({ request, urlParams }) =>
          server.user({ address: clientAddress(request, settings.trustProxy), authorization: header(request, "authorization") }, urlParams.client_id).pipe(
            Effect.map((user) => HttpServerResponse.unsafeJson(user, { headers: { "cache-control": "no-store" } })),
            Effect.catchTag("InvalidToken", (error) => Effect.succeed(invalidTokenResponse(error))),
            Effect.orDie
          ))
        .handle("metadata", () => Effect.succeed(server.metadata))
        .handle("openidConfiguration", () => Effect.succeed(server.openidConfiguration))
        .handle("jwks", () => Effect.orDie(server.jwks))
        .handle("userInfo", ({ request }) =>
          server.userInfo(header(request, "authorization")).pipe(
            Effect.map((claims) => HttpServerResponse.unsafeJson(claims, { headers: { "cache-control": "no-store" } })),
            Effect.catchTag("InvalidToken", (error) => Effect.succeed(invalidTokenResponse(error))),
            Effect.orDie
          ))
    }))
