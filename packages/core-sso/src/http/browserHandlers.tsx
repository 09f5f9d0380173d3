import { clientAddressOf } from "@civicstack/kit"
import type * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Either, Option } from "effect"
import { timingSafeEqual } from "node:crypto"
import QRCode from "qrcode"
import type { AdminGroup } from "../api/admin"
import type { BrowserGroup, OAuthGroup } from "../api/SsoApi"
import { isSecretShaped, newSecret } from "../domain/secrets"
import { Authorization } from "../services/Authorization"
import { SignIn } from "../services/SignIn"
import type { CurrentSession, StartedSession } from "../services/SignIn"
import { TwoStepVerification } from "../services/TwoStep"
import { SsoParts } from "../services/SsoParts"
import { contentSecurityPolicy, renderPage } from "./pages/layout"
import {
  AccountPage,
  ErrorPage,
  NoAccessPage,
  RecoveryCodesPage,
  SecondStepPage,
  SignedInPage,
  SignedOutPage,
  SignInPage,
  TwoStepSetUpPage
} from "./pages/pages"
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

const RETURN_PATHS = ["/oauth/authorize", "/account", "/account/two_step"]

/**
 * Where to go after signing in or setting up two-step verification: only back to an authorization request or an
 * account page of this server, so the parameter cannot send anyone elsewhere.
 */
const safeReturnTo = (value: string | undefined): string | undefined => {
  if (value === undefined || !value.startsWith("/") || value.startsWith("//")) return undefined
  const url = new URL(value, "http://host")
  return url.origin === "http://host" && RETURN_PATHS.includes(url.pathname) ? `${url.pathname}${url.search}` : undefined
}

const returnToOf = (url: string) => safeReturnTo(new URL(url, "http://host").searchParams.get("return_to") ?? undefined)

const withReturnTo = (path: string, returnTo: string | undefined) =>
  returnTo === undefined ? path : `${path}?${new URLSearchParams({ return_to: returnTo })}`

/** The QR code of a set-up's `otpauth://` URI, drawn on the server so the page needs no script. */
const qrCodeSvg = (uri: string) =>
  Effect.promise(() => QRCode.toString(uri, { type: "svg", margin: 2, errorCorrectionLevel: "M" }))

export const browserHandlers = <ApiId extends string, E, R>(
  api: HttpApi.HttpApi<ApiId, typeof OAuthGroup | typeof BrowserGroup | typeof AdminGroup, E, R>
) =>
  HttpApiBuilder.group(api, "browser", (handlers) =>
    Effect.gen(function*() {
      const { settings } = yield* SsoParts
      const addressOf = clientAddressOf(settings.trustProxy)
      const signIn = yield* SignIn
      const authorization = yield* Authorization
      const twoStep = yield* TwoStepVerification
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
          ? Effect.succeed({ origins: [] as ReadonlyArray<string>, applicationName: undefined as string | undefined })
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

      const withSession = (response: HttpServerResponse.HttpServerResponse, sessionId: string) =>
        HttpServerResponse.unsafeSetCookie(response, SESSION_COOKIE, sessionId, cookieOptions)

      const throttledPage = (page: HttpServerResponse.HttpServerResponse, retryAfterSeconds: number) =>
        HttpServerResponse.setHeader(page, "retry-after", String(retryAfterSeconds))

      const throttledMessage = (retryAfterSeconds: number) =>
        `Too many attempts to sign in from your network. Try again in ${Math.ceil(retryAfterSeconds / 60)} minutes.`

      /**
       * Where a completed sign-in goes: to set up two-step verification first when it is required of the user (an
       * administrator) and not on yet, else back to the request that asked for it.
       */
      const afterSignIn = (started: StartedSession, returnTo: string | undefined) =>
        Effect.gen(function*() {
          const mustSetUp = (yield* twoStep.required(started.user)) &&
            (yield* twoStep.status(started.user.uid))._tag === "Off"
          const location = mustSetUp ? withReturnTo("/account/two_step", returnTo) : (returnTo ?? "/users/sign_in")
          return withSession(redirect(location, 303), started.sessionId)
        })

      const awaitingSession = (request: HttpServerRequest.HttpServerRequest) => {
        const sessionId = request.cookies[SESSION_COOKIE]
        return sessionId === undefined ? Effect.succeed(Option.none()) : signIn.awaitingSecondStep(sessionId)
      }

      const secondStepPage = (
        csrfToken: string,
        options: { readonly returnTo: string | undefined; readonly recovery: boolean; readonly status?: number; readonly problem?: string }
      ) =>
        Effect.map(returnOrigin(options.returnTo), ({ origins }) =>
          html(
            <SecondStepPage
              csrfToken={csrfToken}
              returnTo={options.returnTo}
              recovery={options.recovery}
              {...(options.problem === undefined ? {} : { problem: options.problem })}
            />,
            options.status ?? 200,
            origins
          ))

      const setUpPage = (
        signedIn: CurrentSession,
        options: { readonly returnTo: string | undefined; readonly status?: number; readonly problem?: string }
      ) =>
        Effect.gen(function*() {
          const begun = yield* Effect.either(twoStep.begin(signedIn.user))
          if (Either.isLeft(begun)) {
            if (begun.left._tag === "AlreadySetUp") return redirect(options.returnTo ?? "/account", 303)
            return yield* Effect.fail(begun.left)
          }
          return html(
            <TwoStepSetUpPage
              csrfToken={signedIn.session.csrfToken}
              returnTo={options.returnTo}
              required={yield* twoStep.required(signedIn.user)}
              secret={begun.right.secret}
              qrSvg={yield* qrCodeSvg(begun.right.uri)}
              {...(options.problem === undefined ? {} : { problem: options.problem })}
            />,
            options.status ?? 200
          )
        })

      /** A page for a signed-in person; anyone else signs in first and comes back. */
      const signedInOnly = <E,>(
        request: HttpServerRequest.HttpServerRequest,
        page: (signedIn: CurrentSession) => Effect.Effect<HttpServerResponse.HttpServerResponse, E>
      ) =>
        Effect.gen(function*() {
          const session = yield* currentSession(request)
          if (Option.isNone(session)) {
            const url = new URL(request.url, "http://host")
            return redirect(withReturnTo("/users/sign_in", `${url.pathname}${url.search}`), 303)
          }
          return yield* page(session.value)
        })

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
              case "TwoStepSetUpRequired": {
                const url = new URL(request.url, "http://host")
                return redirect(withReturnTo("/account/two_step", `${url.pathname}${url.search}`), 302)
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
            const returnTo = returnToOf(request.url)
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
              const started = outcome.right
              const next = started.awaitingSecondStep
                ? withSession(redirect(withReturnTo("/users/two_step", returnTo), 303), started.sessionId)
                : yield* afterSignIn(started, returnTo)
              return HttpServerResponse.unsafeSetCookie(next, CSRF_COOKIE, "", { ...cookieOptions, maxAge: 0 })
            }
            const refusal = outcome.left
            if (refusal._tag === "SignInThrottled") {
              const page = yield* signInPage(request, {
                returnTo,
                status: 429,
                email,
                problem: throttledMessage(refusal.retryAfterSeconds)
              })
              return throttledPage(page, refusal.retryAfterSeconds)
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
        .handleRaw("secondStepPage", ({ request }) =>
          Effect.gen(function*() {
            const returnTo = returnToOf(request.url)
            const waiting = yield* awaitingSession(request)
            if (Option.isNone(waiting)) return redirect(withReturnTo("/users/sign_in", returnTo), 303)
            const recovery = new URL(request.url, "http://host").searchParams.get("method") === "recovery"
            return yield* secondStepPage(waiting.value.session.csrfToken, { returnTo, recovery })
          }).pipe(Effect.orDie))
        .handleRaw("secondStep", ({ request }) =>
          Effect.gen(function*() {
            const form = yield* readForm(request)
            const fields = Either.getOrElse(form, (): Record<string, string> => ({}))
            const returnTo = safeReturnTo(fields["return_to"])
            const waiting = yield* awaitingSession(request)
            if (Option.isNone(waiting)) {
              return withoutSession(yield* signInPage(request, {
                returnTo,
                status: 401,
                problem: "Too long has passed since you entered your password, or you have signed out. Sign in again."
              }))
            }
            const { csrfToken } = waiting.value.session
            const recovery = fields["code"] !== undefined && /[a-z]/i.test(fields["code"])
            if (!sameToken(fields["authenticity_token"], csrfToken)) {
              return yield* secondStepPage(csrfToken, { returnTo, recovery, status: 403, problem: "The form had expired. Enter the code again." })
            }
            const code = fields["code"]?.trim() ?? ""
            if (code === "") {
              return yield* secondStepPage(csrfToken, { returnTo, recovery, status: 400, problem: "Enter the code." })
            }
            const address = clientAddress(request, addressOf)
            const outcome = yield* Effect.either(signIn.secondStep({ sessionId: request.cookies[SESSION_COOKIE]!, code, address }))
            if (Either.isRight(outcome)) return yield* afterSignIn(outcome.right, returnTo)
            const refusal = outcome.left
            switch (refusal._tag) {
              case "SignInThrottled": {
                const page = yield* secondStepPage(csrfToken, {
                  returnTo,
                  recovery,
                  status: 429,
                  problem: throttledMessage(refusal.retryAfterSeconds)
                })
                return throttledPage(page, refusal.retryAfterSeconds)
              }
              case "SecondStepRefused":
                return refusal.signInAgain
                  ? withoutSession(yield* signInPage(request, { returnTo, status: 401, problem: refusal.message }))
                  : yield* secondStepPage(csrfToken, { returnTo, recovery, status: 401, problem: refusal.message })
              default:
                return yield* Effect.fail(refusal)
            }
          }).pipe(Effect.orDie))
        .handleRaw("accountPage", ({ request }) =>
          signedInOnly(request, ({ session, user }) =>
            Effect.map(twoStep.status(user.uid), (status) =>
              html(
                <AccountPage
                  name={user.name}
                  email={user.email}
                  csrfToken={session.csrfToken}
                  twoStep={status._tag === "On" ? status : undefined}
                />
              ))).pipe(Effect.orDie))
        .handleRaw("twoStepSetUpPage", ({ request }) =>
          signedInOnly(request, (signedIn) => setUpPage(signedIn, { returnTo: returnToOf(request.url) })).pipe(Effect.orDie))
        .handleRaw("twoStepSetUp", ({ request }) =>
          signedInOnly(request, (signedIn) =>
            Effect.gen(function*() {
              const form = yield* readForm(request)
              const fields = Either.getOrElse(form, (): Record<string, string> => ({}))
              const returnTo = safeReturnTo(fields["return_to"])
              if (!sameToken(fields["authenticity_token"], signedIn.session.csrfToken)) {
                return yield* setUpPage(signedIn, { returnTo, status: 403, problem: "The form had expired. Enter the code again." })
              }
              const confirmed = yield* Effect.either(
                twoStep.confirm(signedIn.user, fields["code"] ?? "", signedIn.session.idHash)
              )
              if (Either.isRight(confirmed)) {
                return html(<RecoveryCodesPage codes={confirmed.right} continueTo={returnTo ?? "/account"} />)
              }
              switch (confirmed.left._tag) {
                case "WrongCode":
                  return yield* setUpPage(signedIn, {
                    returnTo,
                    status: 400,
                    problem: "That code is not the one your app shows now. Check the app and enter its code again."
                  })
                case "AlreadySetUp":
                  return redirect(returnTo ?? "/account", 303)
                default:
                  return yield* Effect.fail(confirmed.left)
              }
            })).pipe(Effect.orDie))
    }))
