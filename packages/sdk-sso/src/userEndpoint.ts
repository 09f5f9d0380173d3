import { type ClientUser, type InvalidToken, OAuthGroup } from "@civicstack/core-sso/api"
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { Effect } from "effect"
import type { SsoClientError } from "./errors"
import { refineFailures } from "./failures"

/** The OAuth endpoints on their own: what client applications and resource servers speak. */
export class SsoOAuthApi extends HttpApi.make("sso-oauth").add(OAuthGroup) {}

/** The user of `GET /user.json`: the calling application's permissions only, sorted. */
export type SsoUser = ClientUser["user"]

/** What `GET /user.json` says of a token: its user, and how long the token has left when the SSO says so. */
export interface TokenUser {
  readonly user: SsoUser
  readonly expiresInSeconds: number | undefined
}

/**
 * `GET /user.json` with `accessToken` as the bearer token. With `clientId`, the SSO also refuses a token issued to
 * another application.
 */
export const requestUser = (
  baseUrl: string | URL,
  accessToken: string,
  clientId: string | undefined
): Effect.Effect<TokenUser, InvalidToken | SsoClientError, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const httpClient = (yield* HttpClient.HttpClient).pipe(
      HttpClient.mapRequest(HttpClientRequest.bearerToken(accessToken))
    )
    const user = yield* HttpApiClient.endpoint(SsoOAuthApi, { group: "oauth", endpoint: "user", httpClient, baseUrl })
    const answer = yield* refineFailures(user({ urlParams: clientId === undefined ? {} : { client_id: clientId } }))
    return { user: answer.user, expiresInSeconds: answer.expires_in }
  })
