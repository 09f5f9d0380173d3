import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Either, Option } from "effect"
import { timingSafeEqual } from "node:crypto"
import { isSecretShaped, newSecret } from "../domain/secrets"
import { roleHeldBy } from "../services/access"
import { Actor } from "../services/Actor"
import { SignIn } from "../services/SignIn"
import type { CurrentSession } from "../services/SignIn"
import { SsoParts } from "../services/SsoParts"
import { hasTwoStep, twoStepRequired } from "../services/TwoStep"
import { contentSecurityPolicy, renderPage } from "./pages/layout"
import { ErrorPage } from "./pages/pages"
import { readForm } from "./requests"

/**
 * The session's and the sign-in form's cookies. Secure ones take the `__Host-` prefix, which browsers accept only
 * from https, without a domain and for the whole site, so that no other host or plain-http page can plant them.
 */
const cookieNames = (secure: boolean) => {
  const prefix = secure ? "__Host-" : ""
  return { SESSION_COOKIE: `${prefix}civicstack_sso_session`, CSRF_COOKIE: `${prefix}civicstack_sso_csrf` }
}

export const sameToken = (a: string | undefined, b: string | undefined) =>
  a !== undefined && b !== undefined && a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b))

const RETURN_PATHS = ["/", "/oauth/authorize", "/account", "/account/two_step"]

/**
 * Where to go after signing in or setting up two-step verification: only back to an authorization request or a
 * page of this server, so the parameter cannot send anyone elsewhere.
 */
export const safeReturnTo = (value: string | undefined): string | undefined => {
  if (value === undefined || !value.startsWith("/") || value.startsWith("//")) return undefined
  const url = new URL(value, "http://host")
  const known = RETURN_PATHS.includes(url.pathname) || url.pathname.startsWith("/manage/")
  return url.origin === "http://host" && known ? `${url.pathname}${url.search}` : undefined
}

export const returnToOf = (url: string) => safeReturnTo(new URL(url, "http://host").searchParams.get("return_to") ?? undefined)

export const withReturnTo = (path: string, returnTo: string | undefined) =>
  returnTo === undefined ? path : `${path}?${new URLSearchParams({ return_to: returnTo })}`

const pathOf = (request: HttpServerRequest.HttpServerRequest) => {
  const url = new URL(request.url, "http://host")
  return `${url.pathname}${url.search}`
}

/** What every page handler uses: the cookies, HTML and redirect answers, and the signed-in session. */
export const makePageTools = Effect.gen(function*() {
  const { settings, store } = yield* SsoParts
  const signIn = yield* SignIn
  const secure = settings.secureCookies ?? (settings.issuer.startsWith("https:") || settings.production)
  const cookieOptions = { httpOnly: true, sameSite: "lax", secure, path: "/" } as const
  const { CSRF_COOKIE, SESSION_COOKIE } = cookieNames(secure)

  const html = (page: preact.JSX.Element, status = 200, formTargets: ReadonlyArray<string> = []) =>
    HttpServerResponse.text(renderPage(page), {
      status,
      contentType: "text/html; charset=utf-8",
      headers: {
        "content-security-policy": contentSecurityPolicy(formTargets),
        "x-content-type-options": "nosniff",
        "x-frame-options": "DENY",
        "referrer-policy": "no-referrer",
        "cache-control": "no-store"
      }
    })

  const redirect = (location: string, status: 302 | 303) =>
    HttpServerResponse.empty({
      status,
      headers: { location, "cache-control": "no-store", "referrer-policy": "no-referrer" }
    })

  /** The CSRF token of a form for someone not signed in: the browser's, or a new one it is given with the page. */
  const signedOutFormToken = (request: HttpServerRequest.HttpServerRequest) => {
    const existing = request.cookies[CSRF_COOKIE]
    return existing !== undefined && isSecretShaped(existing) ? existing : newSecret()
  }

  const withSignedOutFormToken = (response: HttpServerResponse.HttpServerResponse, token: string) =>
    HttpServerResponse.unsafeSetCookie(response, CSRF_COOKIE, token, { ...cookieOptions, sameSite: "strict" })

  /** Whether a signed-out form came back with the token its page gave the browser. */
  const signedOutFormIsOurs = (request: HttpServerRequest.HttpServerRequest, fields: Readonly<Record<string, string>>) =>
    sameToken(fields["authenticity_token"], request.cookies[CSRF_COOKIE])

  const currentSession = (request: HttpServerRequest.HttpServerRequest) => {
    const sessionId = request.cookies[SESSION_COOKIE]
    return sessionId === undefined ? Effect.succeed(Option.none<CurrentSession>()) : signIn.current(sessionId)
  }

  /** A page for a signed-in person; anyone else signs in first and comes back. */
  const signedInOnly = <E, R>(
    request: HttpServerRequest.HttpServerRequest,
    page: (signedIn: CurrentSession) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
  ) =>
    Effect.gen(function*() {
      const session = yield* currentSession(request)
      if (Option.isNone(session)) return redirect(withReturnTo("/users/sign_in", pathOf(request)), 303)
      return yield* page(session.value)
    })

  /**
   * The fields of a signed-in person's form, once its CSRF token is the session's; `None` for a form that is not
   * theirs (or could not be read), which changes nothing.
   */
  const checkedForm = (request: HttpServerRequest.HttpServerRequest, signedIn: CurrentSession) =>
    Effect.map(readForm(request), (form) => {
      const fields = Either.getOrElse(form, (): Record<string, string> => ({}))
      return sameToken(fields["authenticity_token"], signedIn.session.csrfToken) ? Option.some(fields) : Option.none()
    })

  /**
   * Whether the signed-in person must set up two-step verification before going on: it is required of them (an
   * administrator, or a user of an application that requires it) and not on yet.
   */
  const mustSetUpTwoStep = (signedIn: Pick<CurrentSession, "user">) =>
    Effect.zipWith(
      twoStepRequired(store, signedIn.user.uid),
      hasTwoStep(store, signedIn.user.uid),
      (required, on) => required && !on
    )

  /**
   * Runs `page` for an administrator of at least `role`, with two-step verification on, in their name; anyone else
   * gets 403 and sees nothing.
   */
  const asRole = <Err,>(
    request: HttpServerRequest.HttpServerRequest,
    role: "admin" | "superadmin",
    page: (signedIn: CurrentSession) => Effect.Effect<HttpServerResponse.HttpServerResponse, Err, Actor>
  ) =>
    signedInOnly(request, (signedIn) =>
      Effect.gen(function*() {
        const held = yield* roleHeldBy(store, signedIn.user.uid)
        if (held === "user" || (role === "superadmin" && held !== "superadmin")) {
          const who = role === "superadmin" ? "superadmins" : "administrators"
          return html(<ErrorPage title="You cannot use this page" message={`Only ${who} of the sign-on can use this page.`} />, 403)
        }
        if (yield* mustSetUpTwoStep(signedIn)) return redirect(withReturnTo("/account/two_step", pathOf(request)), 303)
        const { email, uid } = signedIn.user
        return yield* Effect.provideService(page(signedIn), Actor, { kind: "administrator", uid, email })
      })).pipe(Effect.orDie)

  return {
    asRole,
    asSuperadmin: <Err,>(
      request: HttpServerRequest.HttpServerRequest,
      page: (signedIn: CurrentSession) => Effect.Effect<HttpServerResponse.HttpServerResponse, Err, Actor>
    ) => asRole(request, "superadmin", page),
    settings,
    cookieOptions,
    CSRF_COOKIE,
    SESSION_COOKIE,
    html,
    redirect,
    currentSession,
    signedOutFormToken,
    withSignedOutFormToken,
    signedOutFormIsOurs,
    signedInOnly,
    checkedForm,
    mustSetUpTwoStep,
    pathOf
  }
})
