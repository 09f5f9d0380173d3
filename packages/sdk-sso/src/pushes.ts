import { Either, ParseResult, Schema } from "effect"
import { TokenRefused } from "./errors"
import type { SsoGuardOptions } from "./Guard"
import { authorizationOf, type NextFunction, type NodeRequestLike, type NodeResponseLike, sendJson, sendRefusal } from "./nodeHttp"
import { createSsoGuard, type SsoPromiseGuard } from "./promiseGuard"

/** The permission the SSO's push user holds on each application it pushes to. */
export const USER_UPDATE_PERMISSION = "user_update_permission"

const Names = Schema.Array(Schema.String)
const NullableText = Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null })

const pushedUserFields = {
  uid: Schema.String.pipe(Schema.minLength(1)),
  name: Schema.String,
  email: Schema.String,
  organisation_slug: NullableText,
  organisation_content_id: NullableText,
  disabled: Schema.optionalWith(Schema.Boolean, { default: () => false })
}

/** The `seed` format's update: the full user, with permissions by application name. */
export const SeedPushBody = Schema.Struct({
  user: Schema.Struct({ ...pushedUserFields, permissions: Schema.Record({ key: Schema.String, value: Names }) })
})
/** The `gds-sso` format's update: the application's own `/user.json` body, with its permissions only. */
export const GdsSsoPushBody = Schema.Struct({
  user: Schema.Struct({ ...pushedUserFields, permissions: Names })
})

const decodeSeedPush = Schema.decodeUnknownEither(SeedPushBody, { errors: "all" })
const decodeGdsSsoPush = Schema.decodeUnknownEither(GdsSsoPushBody, { errors: "all" })

export type PushFormat = "seed" | "gds-sso"
export type SeedPushedUser = typeof SeedPushBody.Type["user"]
export type GdsSsoPushedUser = typeof GdsSsoPushBody.Type["user"]
export type PushedUserOf<Format extends PushFormat> = Format extends "seed" ? SeedPushedUser : GdsSsoPushedUser

export interface PushReceiverOptions<Format extends PushFormat> extends Omit<SsoGuardOptions, "clientId"> {
  /** This application's client_id: a push token issued to another application is refused. */
  readonly clientId: string
  /** What the SSO sends to this application: its `push_format`. */
  readonly format: Format
  /**
   * `seed` only: the path of the application's `home_uri`, under which the SSO puts `/users/{uid}`. Default none.
   * The `gds-sso` paths are fixed (`/auth/gds/api/users/{uid}`).
   */
  readonly pathPrefix?: string | undefined
  /** The user's new state; answered 200 once it settles, 500 if it throws. */
  readonly onUpdate: (user: PushedUserOf<Format>) => void | Promise<void>
  /** End the user's sessions here, so that they sign in again. */
  readonly onReauth: (uid: string) => void | Promise<void>
  /** A larger body is refused with 413. Default 1 MiB. */
  readonly maxBodyBytes?: number | undefined
  /**
   * The guard of this application's own API (`createSsoGuard`): pushes are checked with it, and a push about a user
   * makes it forget that user's cached tokens at once. Without it the receiver makes a guard of its own.
   */
  readonly guard?: SsoPromiseGuard | undefined
  readonly fetch?: typeof fetch | undefined
  readonly now?: (() => number) | undefined
}

/** A request the receiver can read: a Node `IncomingMessage`, or an Express request (whose `body` is used if parsed). */
export interface PushRequest extends NodeRequestLike, AsyncIterable<Uint8Array | string> {
  readonly originalUrl?: string | undefined
  readonly body?: unknown
}

export interface PushReceiver {
  /** For `node:http`: answers a push and resolves true, or resolves false (answering nothing) for any other path. */
  readonly handle: (request: PushRequest, response: NodeResponseLike) => Promise<boolean>
  /** Express-style: answers pushes, hands every other request to `next()`. */
  readonly middleware: (request: PushRequest, response: NodeResponseLike, next: NextFunction) => void
  readonly close: () => Promise<void>
}

export type Route = { readonly kind: "update" | "reauth"; readonly uid: string } | { readonly kind: "wrongMethod"; readonly allow: string }

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** Where a format's pushes arrive: `{pathPrefix}/users` for `seed`, gds-sso's fixed path otherwise. */
export const usersPathOf = (format: PushFormat, pathPrefix: string | undefined) =>
  format === "gds-sso" ? "/auth/gds/api/users" : `${(pathPrefix ?? "").replace(/\/+$/, "")}/users`

/** The pushed user in the body, checked against the path's uid; `Left` is the 400's message. */
export const pushedUserOf = <Format extends PushFormat>(
  format: Format,
  uid: string,
  body: unknown
): Either.Either<PushedUserOf<Format>, string> => {
  const decoded: Either.Either<{ readonly user: SeedPushedUser | GdsSsoPushedUser }, ParseResult.ParseError> =
    format === "gds-sso" ? decodeGdsSsoPush(body) : decodeSeedPush(body)
  if (Either.isLeft(decoded)) {
    return Either.left(`The body is not a pushed user: ${ParseResult.TreeFormatter.formatErrorSync(decoded.left)}`)
  }
  if (decoded.right.user.uid !== uid) return Either.left("The body's user.uid is not the uid of the path")
  return Either.right(decoded.right.user as PushedUserOf<Format>)
}

export const routeMatcher = (usersPath: string) => {
  const pattern = new RegExp(`^${escapeRegExp(usersPath)}/([^/]+)(/reauth)?/?$`)
  return (method: string, pathname: string): Route | undefined => {
    const match = pattern.exec(pathname)
    if (match === null) return undefined
    let uid: string
    try {
      uid = decodeURIComponent(match[1]!)
    } catch {
      return undefined
    }
    const isReauth = match[2] !== undefined
    const expectedMethod = isReauth ? "POST" : "PUT"
    if (method !== expectedMethod) return { kind: "wrongMethod", allow: expectedMethod }
    return { kind: isReauth ? "reauth" : "update", uid }
  }
}

class BodyTooLarge extends Error {}

const readBody = async (request: PushRequest, limit: number): Promise<string> => {
  const chunks: Array<Buffer> = []
  let size = 0
  for await (const chunk of request) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : Buffer.from(chunk)
    size += bytes.length
    if (size > limit) throw new BodyTooLarge()
    chunks.push(bytes)
  }
  return Buffer.concat(chunks).toString("utf8")
}

/** An Express body parser may have read the body already. */
const bodyOf = async (request: PushRequest, limit: number): Promise<unknown> => {
  const parsed = request.body
  if (parsed === undefined) {
    const text = await readBody(request, limit)
    return text === "" ? undefined : JSON.parse(text)
  }
  if (typeof parsed === "string" || Buffer.isBuffer(parsed)) {
    const text = parsed.toString()
    if (Buffer.byteLength(text) > limit) throw new BodyTooLarge()
    return JSON.parse(text)
  }
  return parsed
}

/**
 * Receives the SSO's pushes (an update of a user, or a reauth) in the `seed` or `gds-sso` format. Each push must
 * carry a bearer token that the SSO accepts for this application and whose user holds `user_update_permission`:
 * 401 with `WWW-Authenticate: Bearer` otherwise, 403 without the permission. A body that is not the format's user
 * (or names another uid than the path) is 400 with a JSON `{error}`. Accepted pushes are answered 200.
 */
export const createPushReceiver = <Format extends PushFormat>(options: PushReceiverOptions<Format>): PushReceiver => {
  const { format, guard: appGuard, pathPrefix, onUpdate, onReauth, maxBodyBytes = 1024 * 1024, ...guardOptions } = options
  const guard = appGuard ?? createSsoGuard(guardOptions)
  const matchRoute = routeMatcher(usersPathOf(format, pathPrefix))

  const answer = async (route: Route & { readonly uid: string }, request: PushRequest, response: NodeResponseLike) => {
    await guard.verify(authorizationOf(request), { permission: USER_UPDATE_PERMISSION })
    guard.forgetUser(route.uid)
    if (route.kind === "reauth") {
      await bodyOf(request, maxBodyBytes).catch((error: unknown) => {
        if (error instanceof BodyTooLarge) throw error
      })
      await onReauth(route.uid)
      return sendJson(response, 200, {})
    }
    let body: unknown
    try {
      body = await bodyOf(request, maxBodyBytes)
    } catch (error) {
      if (error instanceof BodyTooLarge) throw error
      return sendJson(response, 400, { error: "The body is not JSON" })
    }
    const pushed = pushedUserOf(format, route.uid, body)
    if (Either.isLeft(pushed)) return sendJson(response, 400, { error: pushed.left })
    await onUpdate(pushed.right)
    return sendJson(response, 200, {})
  }

  const handle: PushReceiver["handle"] = async (request, response) => {
    const pathname = new URL(request.originalUrl ?? request.url ?? "/", "http://receiver.invalid").pathname
    const route = matchRoute((request.method ?? "GET").toUpperCase(), pathname)
    if (route === undefined) return false
    if (route.kind === "wrongMethod") {
      sendJson(response, 405, { error: `Use ${route.allow}` }, { allow: route.allow })
      return true
    }
    try {
      await answer(route, request, response)
    } catch (error) {
      if (response.headersSent) return true
      if (error instanceof TokenRefused) sendRefusal(response, error)
      else if (error instanceof BodyTooLarge) sendJson(response, 413, { error: `The body is over ${maxBodyBytes} bytes` }, { connection: "close" })
      else sendJson(response, 500, { error: "The push could not be applied" })
    }
    return true
  }

  return {
    handle,
    middleware: (request, response, next) => {
      handle(request, response).then((handled) => {
        if (!handled) next()
      }, next)
    },
    // a guard it was given is its owner's to close
    close: appGuard === undefined ? guard.close : () => Promise.resolve()
  }
}
