import { ClientTag } from "@civicstack/kit/sdk"
import type * as HttpClient from "@effect/platform/HttpClient"
import { Cause, Clock, Deferred, Duration, Effect, Exit, FiberId, Option } from "effect"
import { TokenRefused } from "./errors"
import { TokenCache } from "./tokenCache"
import { requestUser, type SsoUser, type TokenUser } from "./userEndpoint"

/** The most this SDK allows: a revoked token is still accepted for at most this long (gds-sso's figure). */
export const MAX_CACHE_TTL = Duration.minutes(5)
/** How long an accepted token is believed by default. */
export const DEFAULT_CACHE_TTL = Duration.minutes(1)
/** How long a refused token is refused without asking again, so that a flood of one bad token is one question. */
export const DEFAULT_REFUSAL_CACHE_TTL = Duration.seconds(5)
export const DEFAULT_MAX_CACHED_TOKENS = 10_000

export interface SsoGuardOptions {
  /** Where the SSO is served, e.g. `https://signon.example.org`. */
  readonly baseUrl: string | URL
  /** This service's application client_id: the SSO refuses tokens issued to any other application. */
  readonly clientId: string
  /**
   * How long an accepted token is believed without asking the SSO again: 1 minute by default, at most 5, and never
   * past the token's own expiry.
   */
  readonly cacheTtl?: Duration.DurationInput | undefined
  /** How long a refused token is refused without asking again: 5 seconds by default, at most 1 minute. */
  readonly refusalCacheTtl?: Duration.DurationInput | undefined
  /** Tokens remembered at once, accepted and refused each; the least recently used go first. Default 10 000. */
  readonly maxCachedTokens?: number | undefined
}

export interface VerifyOptions {
  /** A permission the user must hold on the application besides `signin` (answered 403 otherwise). */
  readonly permission?: string | undefined
}

export interface SsoGuardService {
  /** Checks an `Authorization` header (`Bearer <token>`) with the SSO's `/user.json`, or the cached answer. */
  readonly verify: (
    authorizationHeader: string | null | undefined,
    options?: VerifyOptions
  ) => Effect.Effect<SsoUser, TokenRefused>
  /** Forgets the cached acceptances of the user's tokens: their next use asks the SSO (after a push about them). */
  readonly forgetUser: (uid: string) => Effect.Effect<void>
}

const BEARER = /^Bearer +([\x21-\x7e]+) *$/i

/** The token of a `Bearer` authorization header, or undefined for anything else. */
export const bearerTokenOf = (authorizationHeader: string | null | undefined): string | undefined =>
  authorizationHeader == null ? undefined : BEARER.exec(authorizationHeader)?.[1]

const ttlMillis = (asked: Duration.DurationInput | undefined, fallback: Duration.Duration, most: Duration.Duration) =>
  Duration.toMillis(Duration.min(asked === undefined ? fallback : Duration.decode(asked), most))

/**
 * Builds a guard on the `HttpClient` in context. Accepted tokens are cached for `cacheTtl` at most, and never past
 * their expiry; tokens the SSO refused are refused again for `refusalCacheTtl` without asking. Concurrent checks of
 * one token share one question. Time is read from `currentTimeMillis`, Effect's `Clock` unless given (so `TestClock`
 * moves the cache forward).
 */
export const makeSsoGuard = (
  options: SsoGuardOptions,
  currentTimeMillis: Effect.Effect<number> = Clock.currentTimeMillis
): Effect.Effect<SsoGuardService, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    if (typeof options.clientId !== "string" || options.clientId === "") {
      // without it a token issued to any application would be accepted
      return yield* Effect.dieMessage("SsoGuard: clientId, this application's client_id, is required")
    }
    const httpContext = yield* Effect.context<HttpClient.HttpClient>()
    const maxEntries = Math.max(1, Math.floor(options.maxCachedTokens ?? DEFAULT_MAX_CACHED_TOKENS))
    const accepted = new TokenCache<SsoUser>(ttlMillis(options.cacheTtl, DEFAULT_CACHE_TTL, MAX_CACHE_TTL), maxEntries)
    const refused = new TokenCache<TokenRefused>(
      ttlMillis(options.refusalCacheTtl, DEFAULT_REFUSAL_CACHE_TTL, Duration.minutes(1)),
      maxEntries
    )

    const askSso = (token: string) =>
      requestUser(options.baseUrl, token, options.clientId).pipe(
        Effect.provide(httpContext),
        Effect.catchTags({
          InvalidToken: (refusal) =>
            Effect.fail(new TokenRefused({ reason: "InvalidToken", message: refusal.error_description })),
          SsoClientError: (failure) =>
            Effect.fail(new TokenRefused({ reason: "SsoUnavailable", message: `The token could not be checked: ${failure.message}` }))
        })
      )

    const remember = (key: string, exit: Exit.Exit<TokenUser, TokenRefused>) =>
      Effect.map(currentTimeMillis, (now) => {
        if (Exit.isSuccess(exit)) {
          const { expiresInSeconds, user } = exit.value
          if (expiresInSeconds === undefined || expiresInSeconds > 0) {
            accepted.set(key, user, now, expiresInSeconds === undefined ? undefined : expiresInSeconds * 1000)
          }
          return
        }
        // an SSO that could not be asked has refused nothing
        const failure = Cause.failureOption(exit.cause)
        if (Option.isSome(failure) && failure.value.reason === "InvalidToken") refused.set(key, failure.value, now)
      })

    /** One question to the SSO per token at a time: a burst of requests with a new token waits for one answer. */
    const asking = new Map<string, Deferred.Deferred<SsoUser, TokenRefused>>()

    const askOnce = (key: string, token: string) =>
      Effect.suspend(() => {
        const pending = asking.get(key)
        if (pending !== undefined) return Deferred.await(pending)
        const answer = Deferred.unsafeMake<SsoUser, TokenRefused>(FiberId.none)
        asking.set(key, answer)
        // a daemon, so a caller that gives up does not leave the others waiting
        return askSso(token).pipe(
          Effect.exit,
          Effect.tap((exit) => remember(key, exit)),
          Effect.flatMap((exit) => {
            asking.delete(key)
            return Deferred.done(answer, Exit.map(exit, ({ user }) => user))
          }),
          Effect.forkDaemon,
          Effect.zipRight(Deferred.await(answer))
        )
      })

    const userFor = (token: string) =>
      Effect.gen(function*() {
        const key = TokenCache.keyOf(token)
        const now = yield* currentTimeMillis
        const cached = accepted.get(key, now)
        if (cached !== undefined) return cached
        const refusal = refused.get(key, now)
        if (refusal !== undefined) return yield* refusal
        return yield* askOnce(key, token)
      })

    const verify: SsoGuardService["verify"] = (authorizationHeader, verifyOptions = {}) => {
      const token = bearerTokenOf(authorizationHeader)
      if (token === undefined) {
        return Effect.fail(new TokenRefused({ reason: "MissingToken", message: "A bearer token is required" }))
      }
      return Effect.flatMap(userFor(token), (user) => {
        const permission = verifyOptions.permission
        return permission === undefined || user.permissions.includes(permission)
          ? Effect.succeed(user)
          : Effect.fail(new TokenRefused({ reason: "MissingPermission", message: `The "${permission}" permission is required` }))
      })
    }
    const forgetUser = (uid: string) => Effect.sync(() => accepted.deleteWhere((user) => user.uid === uid))
    return { verify, forgetUser }
  })

/** The guard as an Effect service. */
export class SsoGuard extends ClientTag<SsoGuard, SsoGuardService>()("@civicstack/sdk-sso/SsoGuard", makeSsoGuard) {}
