import { clientAddressOf } from "@civicstack/kit"
import type * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Either, Option } from "effect"
import type { SsoGroups } from "../api/SsoApi"
import { lifetimeInWords } from "../domain/emailLinks"
import { EmailLinks } from "../services/EmailLinks"
import type { UsableLink } from "../services/EmailLinks"
import { passwordProblem } from "../services/Passwords"
import { makePageTools } from "./pageTools"
import { ChoosePasswordPage, ForgotPasswordPage, InvitePage, LinkProblemPage, ResetRequestedPage } from "./pages/emailLinks"
import { clientAddress, readForm } from "./requests"

const fieldsOf = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.map(readForm(request), Either.getOrElse((): Record<string, string> => ({})))

/**
 * "Forgot your password?", the page an emailed link opens, and the invitations administrators send. A person who asks
 * for a reset is told the same whether the address is a user's or not.
 */
export const emailLinkHandlers = <ApiId extends string, E, R>(api: HttpApi.HttpApi<ApiId, SsoGroups, E, R>) =>
  HttpApiBuilder.group(api, "emailLinks", (handlers) =>
    Effect.gen(function*() {
      const tools = yield* makePageTools
      const { html, redirect, settings } = tools
      const addressOf = clientAddressOf(settings.trustProxy)
      const emailLinks = yield* EmailLinks

      const forgotPasswordPage = (
        request: HttpServerRequest.HttpServerRequest,
        options: { readonly status?: number; readonly problem?: string; readonly email?: string } = {}
      ) => {
        const csrfToken = tools.signedOutFormToken(request)
        return tools.withSignedOutFormToken(html(<ForgotPasswordPage csrfToken={csrfToken} {...options} />, options.status ?? 200), csrfToken)
      }

      const linkProblemPage = (reason: "used" | "expired" | "unknown") =>
        html(<LinkProblemPage reason={reason} />, reason === "unknown" ? 404 : 410)

      const choosePasswordPage = (
        request: HttpServerRequest.HttpServerRequest,
        { link, user }: UsableLink,
        token: string,
        options: { readonly status?: number; readonly problem?: string } = {}
      ) => {
        const csrfToken = tools.signedOutFormToken(request)
        const page = (
          <ChoosePasswordPage
            invitation={link.purpose === "invitation"}
            email={user.email}
            token={token}
            csrfToken={csrfToken}
            {...(options.problem === undefined ? {} : { problem: options.problem })}
          />
        )
        return tools.withSignedOutFormToken(html(page, options.status ?? 200), csrfToken)
      }

      const invitePage = (
        csrfToken: string,
        options: { readonly status?: number; readonly problem?: string; readonly name?: string; readonly email?: string } = {}
      ) =>
        html(
          <InvitePage csrfToken={csrfToken} lifetime={lifetimeInWords(settings.emailLinks.invitationLifetime)} {...options} />,
          options.status ?? 200
        )

      return handlers
        .handleRaw("forgotPasswordPage", ({ request }) => Effect.succeed(forgotPasswordPage(request)))
        .handleRaw("requestPasswordReset", ({ request }) =>
          Effect.gen(function*() {
            const fields = yield* fieldsOf(request)
            const email = (fields["email"] ?? "").trim()
            if (!tools.signedOutFormIsOurs(request, fields)) {
              return forgotPasswordPage(request, { status: 403, email, problem: "The form had expired. Enter your email address again." })
            }
            const requested = yield* Effect.either(
              emailLinks.requestPasswordReset({ email, address: clientAddress(request, addressOf) })
            )
            if (Either.isRight(requested)) {
              return html(<ResetRequestedPage lifetime={lifetimeInWords(settings.emailLinks.passwordResetLifetime)} />)
            }
            switch (requested.left._tag) {
              case "InvalidInput":
                return forgotPasswordPage(request, { status: 400, email, problem: "Enter an email address, like name@example.org." })
              case "ResetThrottled": {
                const { retryAfterSeconds } = requested.left
                const page = forgotPasswordPage(request, {
                  status: 429,
                  email,
                  problem: `Too many password resets were asked for. Try again in ${Math.ceil(retryAfterSeconds / 60)} minutes.`
                })
                return HttpServerResponse.setHeader(page, "retry-after", String(retryAfterSeconds))
              }
              default:
                return yield* Effect.fail(requested.left)
            }
          }).pipe(Effect.orDie))
        .handleRaw("choosePasswordPage", ({ request }) =>
          Effect.gen(function*() {
            const token = new URL(request.url, "http://host").searchParams.get("token") ?? ""
            const usable = yield* Effect.either(emailLinks.inspect(token))
            if (Either.isLeft(usable)) {
              return usable.left._tag === "EmailLinkRefused" ? linkProblemPage(usable.left.reason) : yield* Effect.fail(usable.left)
            }
            return choosePasswordPage(request, usable.right, token)
          }).pipe(Effect.orDie))
        .handleRaw("choosePassword", ({ request }) =>
          Effect.gen(function*() {
            const fields = yield* fieldsOf(request)
            const token = fields["token"] ?? ""
            const usable = yield* Effect.either(emailLinks.inspect(token))
            if (Either.isLeft(usable)) {
              return usable.left._tag === "EmailLinkRefused" ? linkProblemPage(usable.left.reason) : yield* Effect.fail(usable.left)
            }
            const again = (status: number, problem: string) => choosePasswordPage(request, usable.right, token, { status, problem })
            if (!tools.signedOutFormIsOurs(request, fields)) return again(403, "The form had expired. Enter the new password again.")
            const password = fields["new_password"] ?? ""
            if (password === "" || password !== fields["confirm_password"]) {
              return again(400, "Enter the new password twice, the same both times.")
            }
            const tooWeak = passwordProblem(password)
            if (tooWeak !== undefined) return again(400, `The new password ${tooWeak}.`)
            const set = yield* Effect.either(emailLinks.setPassword(token, password))
            if (Either.isRight(set)) return redirect("/users/sign_in?done=password_set", 303)
            switch (set.left._tag) {
              case "EmailLinkRefused":
                return linkProblemPage(set.left.reason)
              case "InvalidInput":
                return again(400, `The new password ${set.left.problem}.`)
              default:
                return yield* Effect.fail(set.left)
            }
          }).pipe(Effect.orDie))
        .handleRaw("newInvitation", ({ request }) =>
          tools.asRole(request, "admin", (signedIn) => Effect.succeed(invitePage(signedIn.session.csrfToken))))
        .handleRaw("invite", ({ request }) =>
          tools.asRole(request, "admin", (signedIn) =>
            Effect.gen(function*() {
              const form = yield* tools.checkedForm(request, signedIn)
              const { csrfToken } = signedIn.session
              if (Option.isNone(form)) return invitePage(csrfToken, { status: 403, problem: "The form had expired. Enter the details again." })
              const name = (form.value["name"] ?? "").trim()
              const email = (form.value["email"] ?? "").trim()
              const invited = yield* Effect.either(emailLinks.invite({ name, email }))
              if (Either.isRight(invited)) return redirect(`/manage/users/${encodeURIComponent(invited.right.user.uid)}?done=invited`, 303)
              const entered = { name, email }
              switch (invited.left._tag) {
                case "InvalidInput":
                  return invitePage(csrfToken, { ...entered, status: 400, problem: `The ${invited.left.field} ${invited.left.problem}.` })
                case "AlreadyTaken":
                  return invitePage(csrfToken, { ...entered, status: 409, problem: "A user with this email address already exists." })
                case "NotAllowed":
                  return invitePage(csrfToken, { ...entered, status: 403, problem: `${invited.left.reason}.` })
                default:
                  return yield* Effect.fail(invited.left)
              }
            })))
    }))
