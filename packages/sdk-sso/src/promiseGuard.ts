import { Effect } from "effect"
import { TokenRefused } from "./errors"
import { makeSsoGuard, type SsoGuardOptions, type VerifyOptions } from "./Guard"
import { authorizationOf, type NextFunction, type NodeRequestLike, type NodeResponseLike, sendJson, sendRefusal } from "./nodeHttp"
import { fetchHttpClient, promiseRunner } from "@civicstack/kit/sdk"
import type { SsoUser } from "./userEndpoint"

export interface CreateSsoGuardOptions extends SsoGuardOptions {
  /** Used instead of the global `fetch`. */
  readonly fetch?: typeof fetch | undefined
  /** The time in milliseconds since the epoch; `Date.now` unless given (tests move it by hand). */
  readonly now?: (() => number) | undefined
}

/** A request that passed the guard: the user the token belongs to. */
export interface GuardedRequest {
  ssoUser?: SsoUser
}

export interface SsoPromiseGuard {
  /** Resolves with the token's user; rejects with `TokenRefused` (its `status` is 401, 403 or 503). */
  readonly verify: (authorizationHeader: string | null | undefined, options?: VerifyOptions) => Promise<SsoUser>
  /**
   * For `node:http`: resolves with the user (also set as `request.ssoUser`), or answers the refusal itself (401 with
   * `WWW-Authenticate: Bearer`, 403, or 503, each with a JSON `{error}`) and resolves with undefined.
   */
  readonly authenticate: (
    request: NodeRequestLike & GuardedRequest,
    response: NodeResponseLike,
    options?: VerifyOptions
  ) => Promise<SsoUser | undefined>
  /** Express-style middleware doing what `authenticate` does, then calling `next()` for a request that passed. */
  readonly middleware: (
    options?: VerifyOptions
  ) => (request: NodeRequestLike & GuardedRequest, response: NodeResponseLike, next: NextFunction) => void
  /** Forgets the cached acceptances of the user's tokens, so that their next use asks the SSO. */
  readonly forgetUser: (uid: string) => void
  readonly close: () => Promise<void>
}

export const createSsoGuard = (options: CreateSsoGuardOptions): SsoPromiseGuard => {
  const { fetch: customFetch, now = Date.now, ...guardOptions } = options
  const runner = promiseRunner(fetchHttpClient(customFetch), "SSO guard")
  const guard = Effect.runSync(
    makeSsoGuard(guardOptions, Effect.sync(now)).pipe(Effect.provide(fetchHttpClient(customFetch)))
  )

  const verify: SsoPromiseGuard["verify"] = (authorizationHeader, verifyOptions) =>
    runner.run(guard.verify(authorizationHeader, verifyOptions))

  const authenticate: SsoPromiseGuard["authenticate"] = async (request, response, verifyOptions) => {
    try {
      const user = await verify(authorizationOf(request), verifyOptions)
      request.ssoUser = user
      return user
    } catch (error) {
      if (error instanceof TokenRefused) sendRefusal(response, error)
      else sendJson(response, 500, { error: "The token could not be checked" })
      return undefined
    }
  }

  return {
    verify,
    authenticate,
    middleware: (verifyOptions) => (request, response, next) => {
      authenticate(request, response, verifyOptions).then(
        (user) => {
          if (user !== undefined) next()
        },
        next
      )
    },
    forgetUser: (uid) => Effect.runSync(guard.forgetUser(uid)),
    close: runner.close
  }
}
