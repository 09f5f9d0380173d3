import { clientAddressOf, now } from "@civicstack/kit"
import type * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Duration, Effect, Either, Option } from "effect"
import QRCode from "qrcode"
import type { SsoGroups } from "../api/SsoApi"
import { Authorization } from "../services/Authorization"
import { looksLikeRecoveryCode } from "../domain/twoStep"
import { SECOND_STEP_TOO_LATE, SignIn } from "../services/SignIn"
import type { CurrentSession, StartedSession } from "../services/SignIn"
import { Actor } from "../services/Actor"
import { Directory } from "../services/Directory"
import { passwordProblem } from "../services/Passwords"
import { TwoStepVerification } from "../services/TwoStep"
import { makePageTools, returnToOf, safeReturnTo, sameToken, withReturnTo } from "./pageTools"
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

/** The QR code of a set-up's `otpauth://` URI, drawn on the server so the page needs no script. */
const qrCodeSvg = (uri: string) =>
  Effect.promise(() => QRCode.toString(uri, { type: "svg", margin: 2, errorCorrectionLevel: "M" }))

export const browserHandlers = <ApiId extends string, E, R>(
  api: HttpApi.HttpApi<ApiId, SsoGroups, E, R>
) =>
  HttpApiBuilder.group(api, "browser", (handlers) =>
    Effect.gen(function*() {
      const tools = yield* makePageTools
      const { CSRF_COOKIE, SESSION_COOKIE, cookieOptions, currentSession, html, redirect, settings, signedInOnly } = tools
      const addressOf = clientAddressOf(settings.trustProxy)
      const signIn = yield* SignIn
      const authorization = yield* Authorization
      const twoStep = yield* TwoStepVerification
      const directory = yield* Directory

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
        options: {
          readonly returnTo: string | undefined
          readonly status?: number
          readonly problem?: string
          readonly email?: string
          readonly notice?: string
        }
      ) =>
        Effect.gen(function*() {
          const csrfToken = tools.signedOutFormToken(request)
          const { applicationName, origins } = yield* returnOrigin(options.returnTo)
          const page = (
            <SignInPage
              csrfToken={csrfToken}
              returnTo={options.returnTo}
              applicationName={applicationName}
              {...(options.email === undefined ? {} : { email: options.email })}
              {...(options.problem === undefined ? {} : { problem: options.problem })}
              {...(options.notice === undefined ? {} : { notice: options.notice })}
            />
          )
          return tools.withSignedOutFormToken(html(page, options.status ?? 200, origins), csrfToken)
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
          const mustSetUp = yield* tools.mustSetUpTwoStep(started)
          const location = mustSetUp ? withReturnTo("/account/two_step", returnTo) : (returnTo ?? "/")
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

      const accountPage = (
        { session, user }: CurrentSession,
        options: { readonly status?: number; readonly problem?: string; readonly done?: boolean }
      ) =>
        Effect.gen(function*() {
          const status = yield* twoStep.status(user.uid)
          const signIns = (yield* directory.events({ userUid: user.uid, limit: 200 }))
            .filter((event) => event.kind === "signed_in")
            .slice(0, 10)
            .map((event) => ({
              at: event.at,
              address: String(event.detail["address"] ?? "unknown"),
              secondStep: event.detail["second_step"] === "recovery_code"
                ? "recovery code"
                : event.detail["second_step"] === "code"
                ? "app's code"
                : "none"
            }))
          return html(
            <AccountPage
              name={user.name}
              email={user.email}
              csrfToken={session.csrfToken}
              twoStep={status._tag === "On" ? status : undefined}
              signIns={signIns}
              problem={options.problem}
              done={options.done ?? false}
            />,
            options.status ?? 200
          )
        })

      /** The session's sign-in is older than `signIn.recentFor`: a change that ties the account to a device asks for the password. */
      const signedInLongAgo = ({ session }: CurrentSession) =>
        Effect.map(now, (at) => at.getTime() - session.authTime.getTime() > Duration.toMillis(settings.signIn.recentFor))

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
              askPassword={yield* signedInLongAgo(signedIn)}
              {...(options.problem === undefined ? {} : { problem: options.problem })}
            />,
            options.status ?? 200
          )
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
            const passwordSet = new URL(request.url, "http://host").searchParams.get("done") === "password_set"
            return yield* signInPage(request, passwordSet ? { returnTo, notice: "Your password is set. Sign in with it." } : { returnTo })
          }).pipe(Effect.orDie))
        .handleRaw("signIn", ({ request }) =>
          Effect.gen(function*() {
            const form = yield* readForm(request)
            if (Either.isLeft(form)) {
              return yield* signInPage(request, { returnTo: undefined, status: 400, problem: "The form could not be read. Try again." })
            }
            const { email, password } = form.right
            const returnTo = safeReturnTo(form.right["return_to"])
            if (!tools.signedOutFormIsOurs(request, form.right)) {
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
                problem: SECOND_STEP_TOO_LATE
              }))
            }
            const { csrfToken } = waiting.value.session
            const recovery = looksLikeRecoveryCode(fields["code"] ?? "")
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
          signedInOnly(request, (signedIn) =>
            accountPage(signedIn, { done: new URL(request.url, "http://host").searchParams.get("done") === "password" })
          ).pipe(Effect.orDie))
        .handleRaw("changePassword", ({ request }) =>
          signedInOnly(request, (signedIn) =>
            Effect.gen(function*() {
              const form = yield* tools.checkedForm(request, signedIn)
              if (Option.isNone(form)) {
                return yield* accountPage(signedIn, { status: 403, problem: "The form had expired. Enter the passwords again." })
              }
              const { confirm_password, current_password, new_password } = form.value
              if (current_password === undefined || new_password === undefined || new_password !== confirm_password) {
                return yield* accountPage(signedIn, { status: 400, problem: "Enter your current password, and the new one twice, the same both times." })
              }
              const tooWeak = passwordProblem(new_password)
              if (tooWeak !== undefined) return yield* accountPage(signedIn, { status: 400, problem: `The new password ${tooWeak}.` })
              const confirmed = yield* Effect.either(
                signIn.confirmPassword({ user: signedIn.user, password: current_password, address: clientAddress(request, addressOf) })
              )
              if (Either.isLeft(confirmed)) {
                const refusal = confirmed.left
                if (refusal._tag === "SignInThrottled") {
                  const page = yield* accountPage(signedIn, { status: 429, problem: throttledMessage(refusal.retryAfterSeconds) })
                  return throttledPage(page, refusal.retryAfterSeconds)
                }
                if (refusal._tag === "SignInRefused") return yield* accountPage(signedIn, { status: 401, problem: refusal.message })
                return yield* Effect.fail(refusal)
              }
              yield* directory.setPassword(signedIn.user.uid, new_password, { keepSessionHash: signedIn.session.idHash }).pipe(
                Effect.provideService(Actor, { kind: "user", uid: signedIn.user.uid, email: signedIn.user.email })
              )
              return redirect("/account?done=password", 303)
            })).pipe(Effect.orDie))
        .handleRaw("twoStepSetUpPage", ({ request }) =>
          signedInOnly(request, (signedIn) => setUpPage(signedIn, { returnTo: returnToOf(request.url) })).pipe(Effect.orDie))
        .handleRaw("twoStepSetUp", ({ request }) =>
          signedInOnly(request, (signedIn) =>
            Effect.gen(function*() {
              const form = yield* tools.checkedForm(request, signedIn)
              if (Option.isNone(form)) {
                return yield* setUpPage(signedIn, { returnTo: undefined, status: 403, problem: "The form had expired. Enter the code again." })
              }
              const fields = form.value
              const returnTo = safeReturnTo(fields["return_to"])
              if (yield* signedInLongAgo(signedIn)) {
                const passwordChecked = yield* Effect.either(signIn.confirmPassword({
                  user: signedIn.user,
                  password: fields["password"] ?? "",
                  address: clientAddress(request, addressOf)
                }))
                if (Either.isLeft(passwordChecked)) {
                  const refusal = passwordChecked.left
                  if (refusal._tag === "SignInThrottled") {
                    const page = yield* setUpPage(signedIn, { returnTo, status: 429, problem: throttledMessage(refusal.retryAfterSeconds) })
                    return throttledPage(page, refusal.retryAfterSeconds)
                  }
                  if (refusal._tag === "SignInRefused") return yield* setUpPage(signedIn, { returnTo, status: 401, problem: refusal.message })
                  return yield* Effect.fail(refusal)
                }
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
