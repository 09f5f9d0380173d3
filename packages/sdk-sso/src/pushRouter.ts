import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Either, Option } from "effect"
import { SsoGuard } from "./Guard"
import { challengeOf } from "./nodeHttp"
import { type PushedUserOf, pushedUserOf, type PushFormat, routeMatcher, USER_UPDATE_PERMISSION, usersPathOf } from "./pushes"

export interface PushHandlerOptions<Format extends PushFormat, E, R> {
  /** What the SSO sends to this application: its `push_format`. */
  readonly format: Format
  /** `seed` only: the path of the application's `home_uri`, under which the SSO puts `/users/{uid}`. */
  readonly pathPrefix?: string | undefined
  /** The user's new state; answered 200 once it succeeds, 500 if it fails. */
  readonly onUpdate: (user: PushedUserOf<Format>) => Effect.Effect<void, E, R>
  /** End the user's sessions here, so that they sign in again. */
  readonly onReauth: (uid: string) => Effect.Effect<void, E, R>
  /** A larger body is refused with 413. Default 1 MiB. */
  readonly maxBodyBytes?: number | undefined
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  HttpServerResponse.text(JSON.stringify(body), {
    status,
    contentType: "application/json; charset=utf-8",
    headers: { "cache-control": "no-store", ...headers }
  })

/**
 * The SSO's pushes for an Effect HTTP app: an `HttpApp` answering the update and reauth paths of `format` (as
 * `createPushReceiver` does for `node:http`), checking each push's bearer token with the `SsoGuard` in context (give it
 * this application's `clientId`) and `user_update_permission`. Any other path is handed to `otherwise`.
 */
export const pushHandler = <Format extends PushFormat, E, R, OE, OR>(
  options: PushHandlerOptions<Format, E, R>,
  otherwise: HttpApp.Default<OE, OR>
): HttpApp.Default<OE, R | OR | SsoGuard | HttpServerRequest.HttpServerRequest> => {
  const matchRoute = routeMatcher(usersPathOf(options.format, options.pathPrefix))
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024
  return Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const pathname = new URL(request.url, "http://receiver.invalid").pathname
    const route = matchRoute(request.method, pathname)
    if (route === undefined) return yield* otherwise
    if (route.kind === "wrongMethod") return json(405, { error: `Use ${route.allow}` }, { allow: route.allow })

    const guard = yield* SsoGuard
    const checked = yield* Effect.either(guard.verify(request.headers["authorization"], { permission: USER_UPDATE_PERMISSION }))
    if (Either.isLeft(checked)) return json(checked.left.status, { error: checked.left.message }, challengeOf(checked.left))
    // the guard in context also guards this application's API: the user's cached tokens are asked about again
    yield* guard.forgetUser(route.uid)

    const declaredLength = Number(request.headers["content-length"] ?? 0)
    if (declaredLength > maxBodyBytes) return json(413, { error: `The body is over ${maxBodyBytes} bytes` }, { connection: "close" })
    const text = yield* request.text.pipe(HttpIncomingMessage.withMaxBodySize(Option.some(maxBodyBytes)), Effect.either)
    if (Either.isLeft(text)) return json(413, { error: `The body is over ${maxBodyBytes} bytes` }, { connection: "close" })

    const respond = (applied: Effect.Effect<void, E, R>) =>
      applied.pipe(
        Effect.as(json(200, {})),
        Effect.catchAll((failure) =>
          Effect.as(Effect.logError("A push could not be applied", failure), json(500, { error: "The push could not be applied" }))
        )
      )
    if (route.kind === "reauth") return yield* respond(options.onReauth(route.uid))
    const body = parseJson(text.right)
    if (Either.isLeft(body)) return json(400, { error: "The body is not JSON" })
    const pushed = pushedUserOf(options.format, route.uid, body.right)
    if (Either.isLeft(pushed)) return json(400, { error: pushed.left })
    return yield* respond(options.onUpdate(pushed.right))
  })
}

const parseJson = (text: string): Either.Either<unknown, unknown> =>
  Either.try(() => (text === "" ? undefined : JSON.parse(text)))
