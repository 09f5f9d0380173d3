import { now } from "@civicstack/kit"
import { Clock, Context, Duration, Effect, Either, Layer, Metric, Option } from "effect"
import { randomUUID } from "node:crypto"
import { InvalidToken, OAuthClientRefused, OAuthRequestRefused, OAuthThrottled } from "../api/errors"
import type { OAuthErrorCode } from "../api/errors"
import type {
  ClientUser,
  IntrospectionResponse,
  OpenIdConfiguration,
  ServerMetadata,
  TokenForm,
  TokenQueryForm,
  TokenResponse
} from "../api/oauth"
import { clientCredentials } from "../domain/clientCredentials"
import { verifierAnswers } from "../domain/pkce"
import type { AccessToken, Application, RefreshToken, User } from "../domain/records"
import { isLive } from "../domain/records"
import { hashSecret, isSecretShaped, matchesHash, newSecret } from "../domain/secrets"
import type { StoreError, TokenHolder } from "../storage/SsoStore"
import { accessProblem } from "../domain/access"
import { tokenGrants } from "../domain/metrics"
import { userAccess } from "./access"
import { SsoParts } from "./SsoParts"
import { makeThrottle } from "./throttle"

/** Where a request came from, as the host sees it: the client's address and its `Authorization` header. */
export interface RequestOrigin {
  readonly address: string
  readonly authorization: string | undefined
}

interface Client {
  readonly application: Application
  /** As the client presented it: the SSO keeps only its hash, and id_tokens name it. */
  readonly clientId: string
}

/** The OpenID Connect claims the granted scopes release, beside `sub`. */
export const profileClaims = (user: User, scopes: ReadonlyArray<string>): Record<string, unknown> => ({
  ...(scopes.includes("profile") ? { name: user.name } : {}),
  ...(scopes.includes("email") ? { email: user.email } : {})
})

type LiveToken =
  | { readonly kind: "access"; readonly token: AccessToken }
  | { readonly kind: "refresh"; readonly token: RefreshToken }

type ClientFailure = OAuthRequestRefused | OAuthClientRefused | OAuthThrottled | StoreError

const countGrant = (grantType: string | undefined, outcome: string) =>
  Metric.increment(Metric.tagged(
    Metric.tagged(tokenGrants, "grant_type", grantType === "authorization_code" || grantType === "refresh_token" ? grantType : "other"),
    "outcome",
    outcome
  ))

const refused = (error: OAuthErrorCode, description: string) =>
  new OAuthRequestRefused({ error, error_description: description })

const missing = (parameter: string) => refused("invalid_request", `The ${parameter} parameter is required`)

const invalidToken = (description: string) => new InvalidToken({ error: "invalid_token", error_description: description })

const seconds = (date: Date) => Math.floor(date.getTime() / 1000)

/** The bearer token of an `Authorization` header; any other scheme is no token. */
export const bearerToken = (authorization: string | undefined): string | undefined =>
  authorization === undefined ? undefined : /^bearer +([\x21-\x7e]+) *$/i.exec(authorization)?.[1]

/**
 * The OAuth 2 authorization and resource server: token exchange with refresh rotation, the user details for a
 * token, revocation and introspection, each behind client authentication whose failures are counted in storage.
 */
export class OAuthServer extends Context.Tag("@civicstack/core-sso/OAuthServer")<OAuthServer, {
  readonly exchange: (form: TokenForm, origin: RequestOrigin) => Effect.Effect<TokenResponse, ClientFailure>
  readonly user: (
    origin: RequestOrigin,
    clientId: string | undefined
  ) => Effect.Effect<ClientUser, InvalidToken | StoreError>
  /**
   * Who holds a bearer token issued to the named application (the SSO's own, or a service it guards), with their
   * permissions on it. For the admin API and for services that share the SSO's process.
   */
  /**
   * `user`'s answer when the token's holder is in memory and the token is accepted; `undefined` otherwise (then ask
   * `user`). A plain call that never waits: for answering `GET /user.json` outside the HTTP stack.
   */
  readonly userFromMemory: (authorization: string | undefined, clientId: string | undefined) => ClientUser | undefined
  readonly caller: (
    authorization: string | undefined,
    applicationName: string
  ) => Effect.Effect<{ readonly user: User; readonly permissions: ReadonlyArray<string> }, InvalidToken | StoreError>
  readonly revoke: (form: TokenQueryForm, origin: RequestOrigin) => Effect.Effect<void, ClientFailure>
  readonly introspect: (form: TokenQueryForm, origin: RequestOrigin) => Effect.Effect<IntrospectionResponse, ClientFailure>
  /** OpenID Connect userinfo: the claims the token's scopes release; the token must have the `openid` scope. */
  readonly userInfo: (authorization: string | undefined) => Effect.Effect<Record<string, unknown>, InvalidToken | StoreError>
  readonly metadata: ServerMetadata
  readonly openidConfiguration: OpenIdConfiguration
  readonly jwks: Effect.Effect<{ readonly keys: ReadonlyArray<Record<string, unknown>> }, StoreError>
  /** Signs id_tokens with a new key from now on; the old public key stays published until its tokens expire. */
  readonly rotateSigningKey: Effect.Effect<string, StoreError>
}>() {
  static readonly layer = Layer.effect(
    OAuthServer,
    Effect.gen(function*() {
      const { idTokens, settings, store } = yield* SsoParts
      const limits = settings.clientAuthentication
      const throttle = makeThrottle(store, limits.window)
      const accessTokenSeconds = Math.round(Duration.toSeconds(settings.accessTokenLifetime))
      /** A refresh token chain lives a fixed time from the sign-in that began it. */
      const refreshChainLive = (authTime: Date, at: Date) =>
        at.getTime() < authTime.getTime() + Duration.toMillis(settings.refreshTokenLifetime)

      const authenticateClient = (
        form: { readonly client_id?: string | undefined; readonly client_secret?: string | undefined },
        origin: RequestOrigin
      ) =>
        Effect.gen(function*() {
          const at = yield* now
          const addressRule = { key: `address:${origin.address}`, limit: limits.perAddress }
          const presented = clientCredentials(origin.authorization, form)
          if (Either.isLeft(presented)) {
            const { code, description } = presented.left
            if (code === "invalid_request") return yield* refused(code, description)
            yield* throttle.recordFailure([addressRule], at)
            return yield* new OAuthClientRefused({ error: code, error_description: description })
          }
          const { clientId, clientSecret } = presented.right
          const clientIdHash = hashSecret(clientId)
          // per client and address: a stranger's bad secrets never slow the client's own server down
          const rules = [{ key: `client:${clientIdHash}:${origin.address}`, limit: limits.perClient }, addressRule]
          const wait = yield* throttle.retryAfter(rules, at)
          if (wait !== undefined) {
            return yield* new OAuthThrottled({
              error: "slow_down",
              error_description: `Too many failed client authentications; try again in ${wait} seconds`,
              retry_after_seconds: wait
            })
          }
          const application = isSecretShaped(clientId)
            ? yield* store.applicationByClientIdHash(clientIdHash)
            : Option.none<Application>()
          if (Option.isSome(application) && !application.value.retired &&
            matchesHash(clientSecret, application.value.clientSecretHash)) {
            return { application: application.value, clientId } satisfies Client
          }
          yield* throttle.recordFailure(rules, at)
          return yield* new OAuthClientRefused({ error: "invalid_client", error_description: "Client authentication failed" })
        })

      /** Fresh access and refresh tokens issued `at`: the secrets handed out, and what the store keeps of them. */
      const newTokens = (at: Date) => {
        const accessToken = newSecret()
        const refreshToken = newSecret()
        return {
          accessToken,
          refreshToken,
          stored: {
            accessToken: {
              id: randomUUID(),
              tokenHash: hashSecret(accessToken),
              expiresAt: new Date(at.getTime() + accessTokenSeconds * 1000)
            },
            refreshToken: { id: randomUUID(), tokenHash: hashSecret(refreshToken) }
          }
        }
      }

      /** The answer that hands out `tokens`, with an id_token for the user when the scopes include `openid`. */
      const tokenResponse = (input: {
        readonly tokens: ReturnType<typeof newTokens>
        readonly at: Date
        readonly clientId: string
        readonly user: User
        readonly scopes: ReadonlyArray<string>
        readonly nonce: string | null
        readonly authTime: Date
      }): Effect.Effect<TokenResponse, StoreError> => {
        const response: TokenResponse = {
          access_token: input.tokens.accessToken,
          token_type: "Bearer",
          expires_in: accessTokenSeconds,
          refresh_token: input.tokens.refreshToken,
          created_at: seconds(input.at),
          ...(input.scopes.length === 0 ? {} : { scope: input.scopes.join(" ") })
        }
        if (!input.scopes.includes("openid")) return Effect.succeed(response)
        return Effect.map(
          idTokens.sign({
            issuer: settings.issuer,
            subject: input.user.uid,
            clientId: input.clientId,
            nonce: input.nonce,
            authTime: input.authTime,
            lifetime: settings.accessTokenLifetime,
            extra: profileClaims(input.user, input.scopes)
          }),
          (idToken) => ({ ...response, id_token: idToken })
        )
      }

      const record = (kind: string, detail: {
        readonly userUid: string | null
        readonly applicationId: string | null
        readonly [key: string]: unknown
      }) =>
        Effect.flatMap(now, (at) => {
          const { applicationId, userUid, ...rest } = detail
          return store.appendEvent({ at, kind, userUid, applicationId, detail: rest })
        })

      /** The user, when they may still sign in to the application. */
      const mayStillSignIn = (application: Application, userUid: string) =>
        Effect.flatMap(userAccess(store, userUid, application), (access) =>
          "problem" in access ? refused("invalid_grant", access.problem) : Effect.succeed(access.user))

      const exchangeCode = ({ application, clientId }: Client, form: TokenForm) =>
        Effect.gen(function*() {
          if (form.code === undefined) return yield* missing("code")
          if (form.redirect_uri === undefined) return yield* missing("redirect_uri")
          const codeHash = hashSecret(form.code)
          const use = yield* store.useGrant(codeHash, yield* now)
          if (Option.isNone(use) || use.value.record.applicationId !== application.id) {
            return yield* refused("invalid_grant", "The authorization code is not valid")
          }
          const grant = use.value.record
          if (!use.value.firstUse) {
            const revoked = yield* store.revokeTokens({ grantCodeHash: codeHash }, yield* now)
            yield* record("code_reused", { userUid: grant.userUid, applicationId: application.id, revoked_tokens: revoked })
            return yield* refused(
              "invalid_grant",
              "The authorization code has already been used; the tokens issued for it are revoked"
            )
          }
          if (grant.expiresAt.getTime() <= (yield* now).getTime()) {
            return yield* refused("invalid_grant", "The authorization code has expired")
          }
          if (form.redirect_uri !== grant.redirectUri) {
            return yield* refused("invalid_grant", "The redirect_uri does not match the one of the authorization request")
          }
          if (grant.codeChallenge !== null) {
            if (form.code_verifier === undefined) return yield* missing("code_verifier")
            if (!verifierAnswers(form.code_verifier, grant.codeChallenge)) {
              return yield* refused("invalid_grant", "The code_verifier does not match the code_challenge")
            }
          } else if (form.code_verifier !== undefined) {
            return yield* refused("invalid_grant", "A code_verifier was sent, but the authorization request had no code_challenge")
          }
          const user = yield* mayStillSignIn(application, grant.userUid)
          const at = yield* now
          const tokens = newTokens(at)
          const common = {
            applicationId: application.id,
            userUid: grant.userUid,
            scopes: grant.scopes,
            grantCodeHash: codeHash,
            chainId: randomUUID(),
            createdAt: at,
            revokedAt: null
          }
          yield* store.atomically(Effect.zipRight(
            store.insertAccessToken({ ...common, ...tokens.stored.accessToken, kind: "oauth" }),
            store.insertRefreshToken({ ...common, ...tokens.stored.refreshToken, authTime: grant.authTime, usedAt: null })
          ))
          const response = yield* tokenResponse({
            tokens,
            at,
            clientId,
            user,
            scopes: grant.scopes,
            nonce: grant.nonce,
            authTime: grant.authTime
          })
          yield* record("tokens_issued", { userUid: grant.userUid, applicationId: application.id, grant: "authorization_code" })
          return response
        })

      const refresh = ({ application, clientId }: Client, form: TokenForm) =>
        Effect.gen(function*() {
          if (form.refresh_token === undefined) return yield* missing("refresh_token")
          const at = yield* now
          const tokens = newTokens(at)
          const found = yield* store.exchangeRefreshToken({
            tokenHash: hashSecret(form.refresh_token),
            application,
            now: at,
            ...tokens.stored
          })
          if (Option.isNone(found) || found.value.holder.refreshToken.applicationId !== application.id) {
            return yield* refused("invalid_grant", "The refresh token is not valid")
          }
          const { exchanged, holder: { permissions, refreshToken: token, user } } = found.value
          if (token.revokedAt !== null) return yield* refused("invalid_grant", "The refresh token has been revoked")
          if (!refreshChainLive(token.authTime, at)) {
            // the exchange may have stored successors: the chain ends with them
            yield* store.revokeTokens({ chainId: token.chainId }, at)
            return yield* refused("invalid_grant", "The refresh token has expired; sign in again")
          }
          // The store leaves a token refused here unused, so that it stays usable should the user be allowed back.
          const problem = accessProblem(user, application, permissions)
          if (problem !== undefined) return yield* refused("invalid_grant", problem)
          if (exchanged) {
            return yield* tokenResponse({
              tokens,
              at,
              clientId,
              user,
              scopes: token.scopes,
              nonce: null,
              authTime: token.authTime
            })
          }
          const revoked = yield* store.revokeTokens({ chainId: token.chainId }, yield* now)
          yield* record("refresh_token_reused", { userUid: token.userUid, applicationId: application.id, revoked_tokens: revoked })
          return yield* refused("invalid_grant", "The refresh token has already been used; every token of its chain is revoked")
        })

      const liveTokenOf = (application: Application, token: string): Effect.Effect<Option.Option<LiveToken>, StoreError> =>
        Effect.gen(function*() {
          const at = yield* now
          const tokenHash = hashSecret(token)
          const access = yield* store.accessTokenByHash(tokenHash)
          if (Option.isSome(access)) {
            return access.value.applicationId === application.id && isLive(access.value, at)
              ? Option.some<LiveToken>({ kind: "access", token: access.value })
              : Option.none()
          }
          const refreshToken = yield* store.refreshTokenByHash(tokenHash)
          return Option.isSome(refreshToken) && refreshToken.value.applicationId === application.id &&
              refreshToken.value.revokedAt === null && refreshToken.value.usedAt === null &&
              refreshChainLive(refreshToken.value.authTime, at)
            ? Option.some<LiveToken>({ kind: "refresh", token: refreshToken.value })
            : Option.none()
        })

      /**
       * The live access token of an `Authorization` header, with its application, its user (not suspended) and their
       * permissions there, from `lookup`.
       */
      /** Why the holder's token is not accepted now, or `undefined` when it is. */
      const holderRefusal = (holder: TokenHolder, nowMillis: number) =>
        holder.accessToken.revokedAt !== null
          ? "The access token has been revoked"
          : holder.accessToken.expiresAt.getTime() <= nowMillis
          ? "The access token has expired"
          : holder.user.suspendedAt !== null
          ? "The user is suspended"
          : undefined

      /**
       * The live access token of an `Authorization` header, with its application, its user (not suspended) and their
       * permissions there.
       */
      const tokenHolder = (authorization: string | undefined) =>
        Effect.gen(function*() {
          const token = bearerToken(authorization)
          if (token === undefined) return yield* invalidToken("No bearer access token was sent")
          const found = isSecretShaped(token) ? yield* store.tokenHolder(hashSecret(token)) : Option.none()
          if (Option.isNone(found)) return yield* invalidToken("The access token is not valid")
          const refusal = holderRefusal(found.value, yield* Clock.currentTimeMillis)
          if (refusal !== undefined) return yield* invalidToken(refusal)
          return found.value
        })

      /** `GET /user.json`'s answer for the token's holder, or why the token is refused. */
      const clientUserOf = (holder: TokenHolder, clientId: string | undefined, nowMillis: number) => {
        const { application, permissions, user } = holder
        const refusal = holderRefusal(holder, nowMillis) ??
          (clientId !== undefined && !matchesHash(clientId, application.clientIdHash)
            ? "The access token was not issued to this client"
            : accessProblem(user, application, permissions))
        if (refusal !== undefined) return Either.left(refusal)
        return Either.right({
          user: {
            uid: user.uid,
            name: user.name,
            email: user.email,
            permissions,
            organisation_slug: user.organisationSlug,
            organisation_content_id: user.organisationContentId,
            disabled: false
          },
          expires_in: Math.floor((holder.accessToken.expiresAt.getTime() - nowMillis) / 1000)
        } satisfies ClientUser)
      }

      // the in-memory answer is a plain call, so it reads the clock as a plain call too (TestClock included)
      const clock = yield* Effect.clock

      const issuerUrl = (path: string) => new URL(path, settings.issuer).toString()

      const metadata: ServerMetadata = {
        issuer: settings.issuer,
        authorization_endpoint: issuerUrl("/oauth/authorize"),
        token_endpoint: issuerUrl("/oauth/token"),
        revocation_endpoint: issuerUrl("/oauth/revoke"),
        introspection_endpoint: issuerUrl("/oauth/introspect"),
        jwks_uri: issuerUrl("/.well-known/jwks.json"),
        response_types_supported: ["code"],
        response_modes_supported: ["query"],
        grant_types_supported: ["authorization_code", "refresh_token"],
        token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
        revocation_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
        introspection_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
        code_challenge_methods_supported: ["S256"],
        scopes_supported: ["openid", "profile", "email"],
        authorization_response_iss_parameter_supported: true
      }

      return {
        exchange: (form, origin) =>
          Effect.gen(function*() {
            const client = yield* authenticateClient(form, origin)
            switch (form.grant_type) {
              case undefined:
                return yield* missing("grant_type")
              case "authorization_code":
                return yield* exchangeCode(client, form)
              case "refresh_token":
                return yield* refresh(client, form)
              default:
                return yield* refused(
                  "unsupported_grant_type",
                  "The grant_type must be authorization_code or refresh_token"
                )
            }
          }).pipe(Effect.tapBoth({
            onSuccess: () => countGrant(form.grant_type, "granted"),
            onFailure: (failure) =>
              failure._tag === "StoreError"
                ? Effect.void
                : countGrant(form.grant_type, failure._tag === "OAuthThrottled" ? "throttled" : failure.error)
          })),

        user: (origin, clientId) =>
          Effect.gen(function*() {
            const holder = yield* tokenHolder(origin.authorization)
            const answer = clientUserOf(holder, clientId, yield* Clock.currentTimeMillis)
            return Either.isRight(answer) ? answer.right : yield* invalidToken(answer.left)
          }),

        userFromMemory: (authorization, clientId) => {
          const token = bearerToken(authorization)
          if (token === undefined || !isSecretShaped(token)) return undefined
          const nowMillis = clock.unsafeCurrentTimeMillis()
          const holder = store.tokenHolderInMemory(hashSecret(token), nowMillis)
          if (Option.isNone(holder)) return undefined
          return Either.getOrUndefined(clientUserOf(holder.value, clientId, nowMillis))
        },

        caller: (authorization, applicationName) =>
          Effect.gen(function*() {
            const { application, permissions, user } = yield* tokenHolder(authorization)
            if (application.name !== applicationName || application.retired) {
              return yield* invalidToken(`The access token was not issued for ${applicationName}`)
            }
            return { user, permissions }
          }),

        revoke: (form, origin) =>
          Effect.gen(function*() {
            const { application } = yield* authenticateClient(form, origin)
            if (form.token === undefined) return yield* missing("token")
            const live = yield* liveTokenOf(application, form.token)
            if (Option.isNone(live)) return
            const { kind, token } = live.value
            // a refresh token's revocation ends its whole chain, as RFC 7009 section 2.1 suggests
            yield* store.revokeTokens(
              kind === "access" ? { accessTokenId: token.id } : { chainId: token.chainId },
              yield* now
            )
            yield* record("token_revoked", { userUid: token.userUid, applicationId: application.id, token_kind: kind })
          }),

        introspect: (form, origin) =>
          Effect.gen(function*() {
            const { application } = yield* authenticateClient(form, origin)
            if (form.token === undefined) return yield* missing("token")
            const live = yield* liveTokenOf(application, form.token)
            if (Option.isNone(live)) return { active: false }
            const { kind, token } = live.value
            const user = yield* store.userByUid(token.userUid)
            if (Option.isNone(user) || user.value.suspendedAt !== null) return { active: false }
            return {
              active: true,
              ...(form.client_id === undefined ? {} : { client_id: form.client_id }),
              username: user.value.email,
              sub: user.value.uid,
              ...(token.scopes.length === 0 ? {} : { scope: token.scopes.join(" ") }),
              token_type: kind === "access" ? "Bearer" as const : "refresh_token" as const,
              iat: seconds(token.createdAt),
              ...(live.value.kind === "access" ? { exp: seconds(live.value.token.expiresAt) } : {}),
              iss: settings.issuer
            }
          }),

        userInfo: (authorization) =>
          Effect.gen(function*() {
            const { accessToken, application, permissions, user } = yield* tokenHolder(authorization)
            if (!accessToken.scopes.includes("openid")) {
              return yield* invalidToken("The access token was not issued with the openid scope")
            }
            const problem = accessProblem(user, application, permissions)
            if (problem !== undefined) return yield* invalidToken(problem)
            return { sub: user.uid, ...profileClaims(user, accessToken.scopes) }
          }),

        jwks: Effect.map(idTokens.publicKeys(settings.accessTokenLifetime), (keys) => ({ keys })),
        rotateSigningKey: idTokens.rotate,

        metadata,
        openidConfiguration: {
          ...metadata,
          userinfo_endpoint: issuerUrl("/oauth/userinfo"),
          jwks_uri: issuerUrl("/.well-known/jwks.json"),
          subject_types_supported: ["public"],
          id_token_signing_alg_values_supported: ["RS256"],
          claims_supported: ["sub", "iss", "aud", "azp", "exp", "iat", "auth_time", "nonce", "name", "email"]
        }
      }
    })
  )
}

