import * as AlertsApi from "@civicstack/core-alerts/api"
import * as LinkcheckApi from "@civicstack/core-linkcheck/api"
import * as Sso from "@civicstack/core-sso"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Layer } from "effect"

/** RFC 6750's challenge on a 401, which the declared error cannot carry. */
const challengeBearer = HttpApp.appendPreResponseHandler((_request, response) =>
  Effect.succeed(HttpServerResponse.setHeader(response, "www-authenticate", `Bearer realm="civicstack", error="invalid_token"`))
)

/**
 * Checks the caller of a service's API in-process, with the single sign-on on the same database: a bearer token of a
 * user with `signin` on `application` passes; anything else is refused with 401 or 403. The raw header is read, since
 * the platform's bearer security does not check the scheme.
 */
const callerOf = <Refused401, Refused403>(
  application: string,
  refuse: {
    readonly unauthenticated: (error: string) => Refused401
    readonly forbidden: (error: string) => Refused403
  }
) =>
  Effect.gen(function*() {
    const oauth = yield* Sso.OAuthServer
    return Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const caller = yield* oauth.caller(request.headers["authorization"], application).pipe(
        Effect.catchTags({
          InvalidToken: (refusal) =>
            Effect.zipRight(challengeBearer, Effect.fail(refuse.unauthenticated(refusal.error_description))),
          // the host answers 503 while the database cannot be reached
          StoreError: Effect.die
        })
      )
      if (!caller.permissions.includes(Sso.SIGNIN)) {
        return yield* Effect.fail(refuse.forbidden(`The user may not use this API: no signin permission on ${application}`))
      }
    })
  })

export const linkcheckAccessLayer: Layer.Layer<LinkcheckApi.LinkcheckAccess, never, Sso.OAuthServer> = Layer.effect(
  LinkcheckApi.LinkcheckAccess,
  Effect.map(callerOf(LinkcheckApi.LINKCHECK_APPLICATION, {
    unauthenticated: (error) => new LinkcheckApi.Unauthenticated({ error }),
    forbidden: (error) => new LinkcheckApi.Forbidden({ error })
  }), (check) => ({ bearer: () => check }))
)

export const alertsAccessLayer: Layer.Layer<AlertsApi.AlertsAccess, never, Sso.OAuthServer> = Layer.effect(
  AlertsApi.AlertsAccess,
  Effect.map(callerOf(AlertsApi.ALERTS_APPLICATION, {
    unauthenticated: (error) => new AlertsApi.Unauthenticated({ error }),
    forbidden: (error) => new AlertsApi.Forbidden({ error })
  }), (check) => ({ bearer: () => check }))
)
