import { clientAddressOf } from "@civicstack/kit"
import type * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Either, Option } from "effect"
import { timingSafeEqual } from "node:crypto"
import type { AdminGroup } from "../api/admin"
import type { BrowserGroup, OAuthGroup } from "../api/SsoApi"
import { isSecretShaped, newSecret } from "../domain/secrets"
import { Authorization } from "../services/Authorization"
import { SignIn } from "../services/SignIn"
import { SsoParts } from "../services/SsoParts"
import { contentSecurityPolicy, renderPage } from "./pages/layout"
import { ErrorPage, NoAccessPage, SignedInPage, SignedOutPage, SignInPage } from "./pages/pages"
import { clientAddress, queryOf, readForm } from "./requests"

/**
 * The session's and the sign-in form's cookies. Secure ones take the `__Host-` prefix, which browsers accept only
 * from https, without a domain and for the whole site, so that no other host or plain-http page can plant them.
 */
const cookieNames = (secure: boolean) => {
  const prefix = secure ? "__Host-" : ""
  return { SESSION_COOKIE: `${prefix}civicstack_sso_session`, CSRF_COOKIE: `${prefix}civicstack_sso_csrf` }
}

const sameToken = (a: string | undefined, b: string | undefined) =>
  a !== undefined && b !== undefined && a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b))

/**
 * Where to go after signing in: only back to an authorization request of this server, so the parameter cannot send
 * anyone elsewhere.
 */
const safeReturnTo = (value: string | undefined): string | undefined => {
  if (value === undefined || !value.startsWith("/oauth/authorize?")) return undefined
  const url = new URL(value, "http://host")
  return url.origin === "http://host" && url.pathname === "/oauth/authorize" ? `${url.pathname}${url.search}` : undefined
}

export const browserHandlers = <ApiId extends string, E, R>(
  api: HttpApi.HttpApi<ApiId, typeof OAuthGroup | typeof BrowserGroup | typeof AdminGroup, E, R>
) =>
  HttpApiBuilder.group(api, "browser", (handlers) =>
    Effect.gen(function*() {
      const { settings } = yield* SsoParts
      const addressOf = clientAddressOf(settings.trustProxy)
      const signIn = yield* SignIn
      const authorization = yield* Authorization
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

      const currentSession = (request: HttpServerRequest.HttpServerRequest) => {
        const sessionId = request.cookies[SESSION_COOKIE]
        return sessionId === undefined ? Effect.succeed(Option.none()) : signIn.current(sessionId)
      }

      /** The sign-in form's CSRF token: the browser's, or a new one it is given. */
      const formToken = (request: HttpServerRequest.HttpServerRequest) => {
        const existing = request.cookies[CSRF_COOKIE]
        return existing !== undefined && isSecretShaped(existing) ? existing : newSecret()
      }

      /** The origin of the application an authorization request returns to, which the sign-in form may reach. */
      const returnOrigin = (returnTo: string | undefined) =>
        returnTo === undefined
          ? Effect.succeed({ origins: [] as ReadonlyArray<string>, applicationName: undefined })
          : Effect.map(
            authorization.authorize(queryOf(returnTo), Option.none()),
            (outcome) =>
              outcome._tag === "SignInRequired"
                ? {
                  origins: outcome.application.redirectUris.map((uri) => new URL(uri).origin),
                  applicationName: outcome.application.name
                }
                : { origins: [], applicationName: undefined }
          )

      const signInPage = (
        request: HttpServerRequest.HttpServerRequest,
        options: { readonly returnTo: string | undefined; readonly status?: number; readonly problem?: string; readonly email?: string }
      ) =>
        Effect.gen(function*() {
          const csrfToken = formToken(request)
          const { applicationName, origins } = yield* returnOrigin(options.returnTo)
          const page = (
            <SignInPage
              csrfToken={csrfToken}
              returnTo={options.returnTo}
              applicationName={applicationName}
              {...(options.email === undefined ? {} : { email: options.email })}
              {...(options.problem === undefined ? {} : { problem: options.problem })}
            />
          )
          return HttpServerResponse.unsafeSetCookie(html(page, options.status ?? 200, origins), CSRF_COOKIE, csrfToken, {
            ...cookieOptions,
            sameSite: "strict"
          })
        })

      const withoutSession = (response: HttpServerResponse.HttpServerResponse) =>
        HttpServerResponse.unsafeSetCookie(response, SESSION_COOKIE, "", { ...cookieOptions, maxAge: 0 })

      return handlers
        .handleRaw("authorize", ({ request }) =>
          Effect.gen(function*() {
            const session = yield* currentSession(request)
            const outcome = yield* authorization.authorize(
              queryOf(request.url),
              Option.map(session, ({ session, user }) => ({ user, authTime: session.authTime }))
            )
            switch (outcome._tag) {
              case "ErrorPage":
                return html(<ErrorPage title="This sign-in link does not work" message={outcome.message} />, 400)
              case "Redirect":
                return redirect(outcome.location, 302)
              case "SignInRequired": {
                const url = new URL(request.url, "http://host")
                return redirect(`/users/sign_in?return_to=${encodeURIComponent(`${url.pathname}${url.search}`)}`, 302)
              }
              case "NoAccess":
                return html(
                  <NoAccessPage
                    applicationName={outcome.application.name}
                    reason={outcome.reason}
                    csrfToken={Option.match(session, { onNone: () => "", onSome: ({ session }) => session.csrfToken })}
                  />,
                  403
                )
            }
          }).pipe(Effect.orDie))
        .handleRaw("signInPage", ({ request }) =>
          Effect.gen(function*() {
            const returnTo = safeReturnTo(new URL(request.url, "http://host").searchParams.get("return_to") ?? undefined)
            const session = yield* currentSession(request)
            if (Option.isSome(session)) {
              if (returnTo !== undefined) return redirect(returnTo, 302)
              const { session: current, user } = session.value
              return html(<SignedInPage name={user.name} email={user.email} csrfToken={current.csrfToken} />)
            }
            return yield* signInPage(request, { returnTo })
          }).pipe(Effect.orDie))
        .handleRaw("signIn", ({ request }) =>
          Effect.gen(function*() {
            const form = yield* readForm(request)
            if (Either.isLeft(form)) {
              return yield* signInPage(request, { returnTo: undefined, status: 400, problem: "The form could not be read. Try again." })
            }
            const { authenticity_token, email, password } = form.right
            const returnTo = safeReturnTo(form.right["return_to"])
            if (!sameToken(authenticity_token, request.cookies[CSRF_COOKIE])) {
              return yield* signInPage(request, { returnTo, status: 403, problem: "The form had expired. Enter your details again." })
            }
            if (email === undefined || email.trim() === "" || password === undefined || password === "") {
              return yield* signInPage(request, {
                returnTo,
                status: 400,
                problem: "Enter your email address and your password.",
                ...(email === undefined ? {} : { email })
              })
            }
            const address = clientAddress(request, addressOf)
            const outcome = yield* Effect.either(signIn.signIn({ email, password, address }))
            if (Either.isRight(outcome)) {
              const response = redirect(returnTo ?? "/users/sign_in", 303)
              return HttpServerResponse.unsafeSetCookie(
                HttpServerResponse.unsafeSetCookie(response, SESSION_COOKIE, outcome.right.sessionId, cookieOptions),
                CSRF_COOKIE,
                "",
                { ...cookieOptions, maxAge: 0 }
              )
            }
            const refusal = outcome.left
            if (refusal._tag === "SignInThrottled") {
              const page = yield* signInPage(request, {
                returnTo,
                status: 429,
                email,
                problem: `Too many attempts to sign in from your network. Try again in ${Math.ceil(refusal.retryAfterSeconds / 60)} minutes.`
              })
              return HttpServerResponse.setHeader(page, "retry-after", String(refusal.retryAfterSeconds))
            }
            if (refusal._tag === "SignInRefused") {
              return yield* signInPage(request, { returnTo, status: 401, email, problem: refusal.message })
            }
            return yield* Effect.fail(refusal)
          }).pipe(Effect.orDie))
        .handleRaw("signOut", ({ request }) =>
          Effect.gen(function*() {
            const form = yield* readForm(request)
            const token = Either.isRight(form) ? form.right["authenticity_token"] : undefined
            const session = yield* currentSession(request)
            if (Option.isSome(session)) {
              if (!sameToken(token, session.value.session.csrfToken)) {
                return html(
                  <ErrorPage title="You are still signed in" message="The sign-out form had expired. Go back, reload the page and try again." />,
                  403
                )
              }
              yield* signIn.signOut(request.cookies[SESSION_COOKIE]!)
            }
            return withoutSession(html(<SignedOutPage />))
          }).pipe(Effect.orDie))
    }))
