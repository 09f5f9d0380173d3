import type { TokenResponse } from "@civicstack/core-sso/api"
import { Effect, Either, Layer, type Redacted } from "effect"
import {
  type AuthorizationRequest,
  type AuthorizationStart,
  authorizationUrl,
  type CallbackInput,
  checkCallback,
  SsoOAuthClient
} from "./OAuthClient"
import { fetchHttpClient, promiseRunner } from "@civicstack/kit/sdk"
import type { SsoUser } from "./userEndpoint"

export interface CreateSsoOAuthClientOptions {
  /** Where the SSO is served, e.g. `https://signon.example.org`. */
  readonly baseUrl: string | URL
  readonly clientId: string
  readonly clientSecret: string | Redacted.Redacted<string>
  /** Used instead of the global `fetch`. */
  readonly fetch?: typeof fetch | undefined
}

/**
 * The OAuth client helper with Promises. `checkCallback` throws an `OAuthCallbackError`; the others reject with
 * `OAuthRequestRefused`, `OAuthClientRefused`, `OAuthThrottled`, `InvalidToken` or `SsoClientError`.
 */
export interface SsoOAuthPromiseClient {
  readonly authorizationUrl: (request: AuthorizationRequest) => AuthorizationStart
  readonly checkCallback: (input: CallbackInput, expectedState: string) => { readonly code: string }
  readonly exchangeCode: (code: string, codeVerifier: string, redirectUri: string) => Promise<TokenResponse>
  readonly refresh: (refreshToken: string) => Promise<TokenResponse>
  readonly fetchUser: (accessToken: string) => Promise<SsoUser>
  readonly close: () => Promise<void>
}

export const createSsoOAuthClient = (options: CreateSsoOAuthClientOptions): SsoOAuthPromiseClient => {
  const { fetch: customFetch, ...clientOptions } = options
  const runner = promiseRunner(
    SsoOAuthClient.layer(clientOptions).pipe(Layer.provide(fetchHttpClient(customFetch))),
    "SSO OAuth client"
  )
  return {
    authorizationUrl: (request) => authorizationUrl(options, request),
    checkCallback: (input, expectedState) =>
      Either.getOrThrowWith(checkCallback(input, expectedState), (error) => error),
    exchangeCode: (code, codeVerifier, redirectUri) =>
      runner.run(Effect.flatMap(SsoOAuthClient, (client) => client.exchangeCode(code, codeVerifier, redirectUri))),
    refresh: (refreshToken) => runner.run(Effect.flatMap(SsoOAuthClient, (client) => client.refresh(refreshToken))),
    fetchUser: (accessToken) => runner.run(Effect.flatMap(SsoOAuthClient, (client) => client.fetchUser(accessToken))),
    close: runner.close
  }
}
