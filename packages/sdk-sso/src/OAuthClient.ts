import { ClientTag } from "@civicstack/kit/sdk"
import { OAuthThrottled } from "@civicstack/core-sso/api"
import type {
  OAuthClientRefused,
  OAuthRequestRefused,
  InvalidToken,
  TokenForm,
  TokenResponse
} from "@civicstack/core-sso/api"
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import * as HttpClient from "@effect/platform/HttpClient"
import { Effect, Either, FiberRef, Redacted } from "effect"
import { createHash, randomBytes, timingSafeEqual } from "node:crypto"
import { OAuthCallbackError, type SsoClientError } from "./errors"
import { refineFailures } from "./failures"
import { requestUser, SsoOAuthApi, type SsoUser } from "./userEndpoint"

export interface SsoOAuthClientOptions {
  /** Where the SSO is served, e.g. `https://signon.example.org` (a path prefix is kept). */
  readonly baseUrl: string | URL
  /** This application's credentials, from the SSO's administrators. */
  readonly clientId: string
  readonly clientSecret: string | Redacted.Redacted<string>
}

export interface AuthorizationRequest {
  /** Where the SSO sends the browser back; one of the application's registered redirect URIs, exactly. */
  readonly redirectUri: string
  /** Space-separated scopes, e.g. `openid email`; the SSO's own profile uses none. */
  readonly scope?: string | undefined
}

/** Keep `state` and `codeVerifier` in the user's session until the callback, and send the browser to `url`. */
export interface AuthorizationStart {
  readonly url: string
  readonly state: string
  readonly codeVerifier: string
}

/** What a callback can be given as: the full URL, its query string, or already parsed query parameters. */
export type CallbackInput =
  | string
  | URL
  | URLSearchParams
  | Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

/** Failures of the token endpoint. */
export type TokenRequestError = OAuthRequestRefused | OAuthClientRefused | OAuthThrottled | SsoClientError

export type { TokenResponse }

const joinPath = (baseUrl: string | URL, path: string) => {
  const base = new URL(baseUrl)
  base.pathname = `${base.pathname.replace(/\/+$/, "")}${path}`
  return base
}

const base64Url = (bytes: Buffer) => bytes.toString("base64url")

/** The PKCE S256 challenge of a verifier (RFC 7636 section 4.2). */
export const codeChallengeOf = (codeVerifier: string): string =>
  base64Url(createHash("sha256").update(codeVerifier, "ascii").digest())

/** The authorization endpoint's URL with a fresh `state` (128 random bits, 32 hex) and a PKCE S256 challenge. */
export const authorizationUrl = (
  options: Pick<SsoOAuthClientOptions, "baseUrl" | "clientId">,
  request: AuthorizationRequest
): AuthorizationStart => {
  const state = randomBytes(16).toString("hex")
  const codeVerifier = base64Url(randomBytes(32))
  const url = joinPath(options.baseUrl, "/oauth/authorize")
  url.searchParams.set("response_type", "code")
  url.searchParams.set("client_id", options.clientId)
  url.searchParams.set("redirect_uri", request.redirectUri)
  url.searchParams.set("state", state)
  url.searchParams.set("code_challenge", codeChallengeOf(codeVerifier))
  url.searchParams.set("code_challenge_method", "S256")
  if (request.scope !== undefined) url.searchParams.set("scope", request.scope)
  return { url: url.toString(), state, codeVerifier }
}

const queryOf = (input: CallbackInput): URLSearchParams => {
  if (input instanceof URLSearchParams) return input
  if (input instanceof URL) return input.searchParams
  if (typeof input === "string") {
    const queryStart = input.indexOf("?")
    return new URLSearchParams(queryStart === -1 ? input : input.slice(queryStart + 1).split("#")[0])
  }
  const query = new URLSearchParams()
  for (const [name, value] of Object.entries(input)) {
    if (typeof value === "string") query.append(name, value)
    else if (value !== undefined) for (const each of value) query.append(name, each)
  }
  return query
}

/** Hashing first makes the comparison take the same time whatever the lengths. */
const sameSecret = (a: string, b: string) =>
  timingSafeEqual(createHash("sha256").update(a).digest(), createHash("sha256").update(b).digest())

const single = (query: URLSearchParams, name: string): string | undefined => {
  const values = query.getAll(name)
  return values.length === 1 ? values[0] : undefined
}

/**
 * Checks the redirect back from the SSO against the `state` kept since `authorizationUrl`, before anything else in
 * it is believed, and returns the authorization code. A missing, repeated or different state is refused, and so is
 * an answer carrying `error` (its `error_description` is kept).
 */
export const checkCallback = (
  input: CallbackInput,
  expectedState: string
): Either.Either<{ readonly code: string }, OAuthCallbackError> => {
  const query = queryOf(input)
  const state = single(query, "state")
  if (state === undefined || state === "") {
    return Either.left(new OAuthCallbackError({ reason: "MissingState", message: "The callback carries no state, or more than one" }))
  }
  if (expectedState === "" || !sameSecret(state, expectedState)) {
    return Either.left(
      new OAuthCallbackError({ reason: "StateMismatch", message: "The callback's state is not the one this session sent" })
    )
  }
  const error = query.get("error")
  if (error !== null) {
    const description = query.get("error_description")
    return Either.left(
      new OAuthCallbackError({
        reason: "AuthorizationRefused",
        message: `The SSO refused the authorization: ${error}${description === null ? "" : ` (${description})`}`,
        error,
        ...(description === null ? {} : { errorDescription: description })
      })
    )
  }
  const code = single(query, "code")
  if (code === undefined || code === "") {
    return Either.left(new OAuthCallbackError({ reason: "MissingCode", message: "The callback carries no code" }))
  }
  return Either.right({ code })
}

/** When the access token stops working (`created_at` + `expires_in`): refresh before then. */
export const accessTokenExpiresAt = (tokens: Pick<TokenResponse, "created_at" | "expires_in">): Date =>
  new Date((tokens.created_at + tokens.expires_in) * 1000)

export interface SsoOAuthClientService {
  readonly authorizationUrl: (request: AuthorizationRequest) => AuthorizationStart
  readonly checkCallback: (input: CallbackInput, expectedState: string) => Effect.Effect<{ readonly code: string }, OAuthCallbackError>
  /** `POST /oauth/token` with `grant_type=authorization_code`, the PKCE verifier and the client credentials in the body. */
  readonly exchangeCode: (
    code: string,
    codeVerifier: string,
    redirectUri: string
  ) => Effect.Effect<TokenResponse, TokenRequestError>
  /** `grant_type=refresh_token`. The SSO rotates refresh tokens: keep the new one, the old one is revoked. */
  readonly refresh: (refreshToken: string) => Effect.Effect<TokenResponse, TokenRequestError>
  /** `GET /user.json` for this application (its client_id is sent, so a token of another application is refused). */
  readonly fetchUser: (accessToken: string) => Effect.Effect<SsoUser, InvalidToken | SsoClientError>
}

/** The last `Retry-After` the token endpoint sent in this fiber: the 429's body cannot carry it. */
const lastRetryAfter = FiberRef.unsafeMake<string | undefined>(undefined)

const recordRetryAfter = HttpClient.tap((response) => FiberRef.set(lastRetryAfter, response.headers["retry-after"]))

/** Seconds from a `Retry-After` of delay-seconds (RFC 9110 section 10.2.3); 0 when absent or an HTTP date. */
const retryAfterSeconds = (header: string | undefined) =>
  header !== undefined && /^\d+$/.test(header.trim()) ? Number(header.trim()) : 0

/** Builds the OAuth client helper on the `HttpClient` in context. */
export const makeSsoOAuthClient = (
  options: SsoOAuthClientOptions
): Effect.Effect<SsoOAuthClientService, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const { oauth } = yield* HttpApiClient.make(SsoOAuthApi, { baseUrl: options.baseUrl, transformClient: recordRetryAfter })
    const httpClient = yield* Effect.context<HttpClient.HttpClient>()
    const clientSecret = Redacted.isRedacted(options.clientSecret)
      ? Redacted.value(options.clientSecret)
      : options.clientSecret
    const token = (form: TokenForm) =>
      refineFailures(
        oauth.oauthToken({ payload: { ...form, client_id: options.clientId, client_secret: clientSecret } })
      ).pipe(
        Effect.catchTag("OAuthThrottled", (throttled) =>
          Effect.flatMap(FiberRef.get(lastRetryAfter), (header) =>
            Effect.fail(new OAuthThrottled({
              error: throttled.error,
              error_description: throttled.error_description,
              retry_after_seconds: retryAfterSeconds(header)
            })))),
        Effect.locally(lastRetryAfter, undefined)
      )
    return {
      authorizationUrl: (request) => authorizationUrl(options, request),
      checkCallback: (input, expectedState) => checkCallback(input, expectedState),
      exchangeCode: (code, codeVerifier, redirectUri) =>
        token({ grant_type: "authorization_code", code, code_verifier: codeVerifier, redirect_uri: redirectUri }),
      refresh: (refreshToken) => token({ grant_type: "refresh_token", refresh_token: refreshToken }),
      fetchUser: (accessToken) =>
        requestUser(options.baseUrl, accessToken, options.clientId).pipe(
          Effect.map(({ user }) => user),
          Effect.provide(httpClient)
        )
    }
  })

/** The OAuth client helper as an Effect service. */
export class SsoOAuthClient extends ClientTag<SsoOAuthClient, SsoOAuthClientService>()(
  "@civicstack/sdk-sso/SsoOAuthClient",
  makeSsoOAuthClient
) {}
