import { ClientTag } from "@civicstack/kit/sdk"
import type * as HttpClient from "@effect/platform/HttpClient"
import { Clock, Deferred, Duration, Effect, FiberId } from "effect"
import { TokenRefused } from "./errors"
import { TokenCache } from "./tokenCache"
import { requestUser, type SsoUser } from "./userEndpoint"

/** gds-sso's figure, and the most this SDK allows: a revoked token is still accepted for at most this long. */
export const MAX_CACHE_TTL = Duration.minutes(5)
export const DEFAULT_MAX_CACHED_TOKENS = 10_000

export interface SsoGuardOptions {
  /** Where the SSO is served, e.g. `https://signon.example.org`. */
  readonly baseUrl: string | URL
  /**
   * This service's application client_id. When given, the SSO refuses tokens issued to any other application;
   * without it, any token of a user with `signin` on the token's application is accepted.
   */
  readonly clientId?: string | undefined
  /** How long an accepted token is believed without asking the SSO again: 5 minutes by default, and at most. */
  readonly cacheTtl?: Duration.DurationInput | undefined
  /** Tokens remembered at once; the least recently used go first. Default 10 000. */
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
}

const BEARER = /^Bearer +([\x21-\x7e]+) *$/i

/** The token of a `Bearer` authorization header, or undefined for anything else. */
export const bearerTokenOf = (authorizationHeader: string | null | undefined): string | undefined =>
  authorizationHeader == null ? undefined : BEARER.exec(authorizationHeader)?.[1]

export const cacheTtlMillis = (cacheTtl: Duration.DurationInput | undefined): number => {
  const asked = cacheTtl === undefined ? MAX_CACHE_TTL : Duration.decode(cacheTtl)
  return Duration.toMillis(Duration.min(asked, MAX_CACHE_TTL))
}

/**
 * Builds a guard on the `HttpClient` in context. Only accepted tokens are cached: a refused one is asked about
 * again, since the user may have been given `signin` since. Concurrent checks of one token share one question. Time is read from `currentTimeMillis`, Effect's
 * `Clock` unless given (so `TestClock` moves the cache forward).
 */
export const makeSsoGuard = (
  options: SsoGuardOptions,
  currentTimeMillis: Effect.Effect<number> = Clock.currentTimeMillis
): Effect.Effect<SsoGuardService, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const httpContext = yield* Effect.context<HttpClient.HttpClient>()
    const maxEntries = Math.max(1, Math.floor(options.maxCachedTokens ?? DEFAULT_MAX_CACHED_TOKENS))
    const cache = new TokenCache<SsoUser>(cacheTtlMillis(options.cacheTtl), maxEntries)

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
          Effect.tap((user) => Effect.map(currentTimeMillis, (now) => cache.set(key, user, now))),
          Effect.exit,
          Effect.flatMap((exit) => {
            asking.delete(key)
            return Deferred.done(answer, exit)
          }),
          Effect.forkDaemon,
          Effect.zipRight(Deferred.await(answer))
        )
      })

    const userFor = (token: string) =>
      Effect.gen(function*() {
        const key = TokenCache.keyOf(token)
        const cached = cache.get(key, yield* currentTimeMillis)
        if (cached !== undefined) return cached
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
    return { verify }
  })

/** The guard as an Effect service. */
export class SsoGuard extends ClientTag<SsoGuard, SsoGuardService>()("@civicstack/sdk-sso/SsoGuard", makeSsoGuard) {}
