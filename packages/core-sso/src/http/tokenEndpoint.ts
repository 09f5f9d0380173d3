import { clientAddressOf } from "@civicstack/kit"
import { Effect, Either, Schema } from "effect"
import type { OAuthClientRefused, OAuthRequestRefused, OAuthThrottled } from "../api/errors"
import { TokenForm } from "../api/oauth"
import { OAuthServer } from "../services/OAuthServer"
import { SsoParts } from "../services/SsoParts"
import { type AddressOf, formOf } from "./requests"

/** The paths of `POST /token`: the seed's, and the two that Doorkeeper clients such as gds-sso call. */
export const TOKEN_PATHS: ReadonlyArray<string> = ["/token", "/oauth/token", "/oauth/access_token"]

/** What the form endpoints read of a request. */
export interface FormRequest {
  readonly contentType: string | undefined
  /** `undefined` when it could not be read. */
  readonly body: string | undefined
  readonly authorization: string | undefined
  readonly forwardedFor: string | undefined
  readonly remoteAddress: string | undefined
}

/** An answer of the OAuth endpoints: its body is JSON, sent as `application/json; charset=utf-8`. */
export interface OAuthAnswer {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/** Token responses and errors are never cached (RFC 6749 section 5.1). */
const NO_STORE = { "cache-control": "no-store", pragma: "no-cache" }

const oauthJson = (body: unknown, status = 200, headers: Record<string, string> = {}): OAuthAnswer => ({
  status,
  headers: { ...NO_STORE, ...headers },
  body: JSON.stringify(body)
})

export const invalidRequestAnswer = (description: string) =>
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

/**
 * A form endpoint's answer to `request`: every problem with the body is answered in RFC 6749's shape rather than the
 * JSON API's envelope. Storage failures are defects, for the host to answer (503 or 500).
 */
export const formAnswer = <F, A>(
  schema: Schema.Schema<F, any>,
  run: (form: F, origin: { readonly address: string; readonly authorization: string | undefined }) => Effect.Effect<
    A,
    OAuthRequestRefused | OAuthClientRefused | OAuthThrottled,
    never
  >,
  addressOf: AddressOf
) =>
(request: FormRequest): Effect.Effect<OAuthAnswer> => {
  const read = formOf(request.contentType, request.body)
  if (Either.isLeft(read)) return Effect.succeed(invalidRequestAnswer(read.left.description))
  const form = Schema.decodeUnknownEither(schema)(read.right)
  if (Either.isLeft(form)) return Effect.succeed(invalidRequestAnswer("The parameters could not be read"))
  const origin = {
    address: addressOf(request.forwardedFor, request.remoteAddress),
    authorization: request.authorization
  }
  return run(form.right, origin).pipe(
    Effect.map((body) => oauthJson(body)),
    Effect.catchAll((error) => Effect.succeed(oauthError(error)))
  )
}

/**
 * `POST /token`'s answer to a request, for the route and for hosts that answer it before their HTTP stack (the body
 * read in full first), so that both give the same answer to the same request.
 */
export const tokenEndpoint: Effect.Effect<(request: FormRequest) => Effect.Effect<OAuthAnswer>, never, OAuthServer | SsoParts> =
  Effect.gen(function*() {
    const server = yield* OAuthServer
    const { settings } = yield* SsoParts
    return formAnswer(
      TokenForm,
      (form, origin) => server.exchange(form, origin).pipe(Effect.catchTag("StoreError", Effect.die)),
      clientAddressOf(settings.trustProxy)
    )
  })
