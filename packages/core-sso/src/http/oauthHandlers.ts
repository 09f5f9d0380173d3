import { clientAddressOf } from "@civicstack/kit"
import type * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Effect } from "effect"
import type { InvalidToken } from "../api/errors"
import { TokenQueryForm } from "../api/oauth"
import type { SsoGroups } from "../api/SsoApi"
import { OAuthServer } from "../services/OAuthServer"
import { SsoParts } from "../services/SsoParts"
import { clientAddress, formRequestOf, header } from "./requests"
import { formAnswer, tokenEndpoint } from "./tokenEndpoint"
import type { FormRequest, OAuthAnswer } from "./tokenEndpoint"

/**
 * Metadata and keys may be cached for a minute: a key rotated meanwhile signs before caches show it, and clients
 * refetch the set when they meet an unknown key id, so the wait is short. A retired key stays published.
 */
const publicForAMinute = HttpApp.appendPreResponseHandler((_request, response) =>
  Effect.succeed(HttpServerResponse.setHeader(response, "cache-control", "public, max-age=60"))
)

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

/** The response that carries `answer`. */
const responseOf = (answer: OAuthAnswer) =>
  HttpServerResponse.text(answer.body, {
    status: answer.status,
    headers: answer.headers,
    contentType: "application/json; charset=utf-8"
  })

/**
 * The form endpoints read their body themselves, so that any problem with it is answered in RFC 6749's shape
 * rather than the JSON API's envelope.
 */
const formEndpoint = (answer: (request: FormRequest) => Effect.Effect<OAuthAnswer>) =>
({ request }: { readonly request: HttpServerRequest.HttpServerRequest }) =>
  Effect.map(Effect.flatMap(formRequestOf(request), answer), responseOf)

/** The handlers of the OAuth 2 endpoints, for an HttpApi that includes `OAuthGroup` under the host's identifier. */
export const oauthHandlers = <ApiId extends string, E, R>(
  api: HttpApi.HttpApi<ApiId, SsoGroups, E, R>
) =>
  HttpApiBuilder.group(api, "oauth", (handlers) =>
    Effect.gen(function*() {
      const server = yield* OAuthServer
      const { settings } = yield* SsoParts
      const exchange = formEndpoint(yield* tokenEndpoint)
      const addressOf = clientAddressOf(settings.trustProxy)
      return handlers
        .handleRaw("token", exchange)
        .handleRaw("oauthToken", exchange)
        .handleRaw("accessToken", exchange)
        .handleRaw("revoke", formEndpoint(formAnswer(
          TokenQueryForm,
          (form, origin) => server.revoke(form, origin).pipe(Effect.as({}), Effect.catchTag("StoreError", Effect.die)),
          addressOf
        )))
        .handleRaw("introspect", formEndpoint(formAnswer(
          TokenQueryForm,
          (form, origin) => server.introspect(form, origin).pipe(Effect.catchTag("StoreError", Effect.die)),
          addressOf
        )))
        .handle("user", ({ request, urlParams }) =>
          server.user({ address: clientAddress(request, addressOf), authorization: header(request, "authorization") }, urlParams.client_id).pipe(
            Effect.map((user) => HttpServerResponse.unsafeJson(user, { headers: { "cache-control": "no-store" } })),
            Effect.catchTag("InvalidToken", (error) => Effect.succeed(invalidTokenResponse(error))),
            Effect.orDie
          ))
        .handle("metadata", () => Effect.as(publicForAMinute, server.metadata))
        .handle("openidConfiguration", () => Effect.as(publicForAMinute, server.openidConfiguration))
        .handle("jwks", () => Effect.zipRight(publicForAMinute, Effect.orDie(server.jwks)))
        .handle("userInfo", ({ request }) =>
          server.userInfo(header(request, "authorization")).pipe(
            Effect.map((claims) => HttpServerResponse.unsafeJson(claims, { headers: { "cache-control": "no-store" } })),
            Effect.catchTag("InvalidToken", (error) => Effect.succeed(invalidTokenResponse(error))),
            Effect.orDie
          ))
    }))
