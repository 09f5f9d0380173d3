import { now } from "@civicstack/kit"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Duration, Effect, Either, Option } from "effect"
import { isLive } from "../domain/records"
import type { User } from "../domain/records"
import { Directory } from "../services/Directory"
import type { CurrentSession } from "../services/SignIn"
import { SsoParts } from "../services/SsoParts"
import { ApiUserPage, ApiUsersPage } from "./pages/manage"
import type { TokenRow } from "./pages/manage"
import { ErrorPage } from "./pages/pages"
import { makePageTools } from "./pageTools"

const EXPIRED_FORM = "The form had expired. Reload the page and try again."

/** The API users' pages, for superadmins: list and create them, issue tokens (shown once) and revoke them. */
export const makeApiUserPages = Effect.gen(function*() {
  const tools = yield* makePageTools
  const { html, redirect } = tools
  const { store } = yield* SsoParts
  const directory = yield* Directory

  const { asSuperadmin } = tools

  const listPage = (
    signedIn: CurrentSession,
    options: { readonly status?: number; readonly problem?: string; readonly form?: { readonly name: string; readonly email: string } } = {}
  ) =>
    Effect.gen(function*() {
      const at = yield* now
      const apiUsers = (yield* store.listUsers).filter((user) => user.isApiUser)
      const users = yield* Effect.forEach(apiUsers, (user) =>
        Effect.map(store.apiTokensOf(user.uid), (tokens) => ({ user, liveTokens: tokens.filter((token) => isLive(token, at)).length })))
      return html(
        <ApiUsersPage users={users} csrfToken={signedIn.session.csrfToken} problem={options.problem} {...(options.form === undefined ? {} : { form: options.form })} />,
        options.status ?? 200
      )
    })

  const userPage = (
    signedIn: CurrentSession,
    user: User,
    options: {
      readonly status?: number
      readonly problem?: string
      readonly notice?: string
      readonly issued?: { readonly token: string; readonly applicationName: string; readonly expiresAt: Date }
    } = {}
  ) =>
    Effect.gen(function*() {
      const at = yield* now
      const applications = (yield* directory.applications).filter((application) => !application.retired)
      const names = new Map(applications.map((application) => [application.id, application.name]))
      const tokens: ReadonlyArray<TokenRow> = (yield* store.apiTokensOf(user.uid)).map((token) => ({
        id: token.id,
        applicationName: names.get(token.applicationId) ?? "(retired application)",
        createdAt: token.createdAt,
        expiresAt: token.expiresAt,
        state: token.revokedAt !== null ? "revoked" : isLive(token, at) ? "live" : "expired"
      }))
      return html(
        <ApiUserPage
          user={user}
          tokens={tokens}
          applications={applications}
          csrfToken={signedIn.session.csrfToken}
          issued={options.issued}
          notice={options.notice}
          problem={options.problem}
        />,
        options.status ?? 200
      )
    })

  /** The API user of `uid`, or the 404 page for anything else. */
  const withApiUser = <Err, R>(uid: string, page: (user: User) => Effect.Effect<HttpServerResponse.HttpServerResponse, Err, R>) =>
    Effect.flatMap(store.userByUid(uid), (found) =>
      Option.isSome(found) && found.value.isApiUser
        ? page(found.value)
        : Effect.succeed(html(<ErrorPage title="No such API user" message="There is no API user at this address." />, 404)))

  return {
    list: (request: HttpServerRequest.HttpServerRequest) => asSuperadmin(request, (signedIn) => listPage(signedIn)),

    create: (request: HttpServerRequest.HttpServerRequest) =>
      asSuperadmin(request, (signedIn) =>
        Effect.gen(function*() {
          const fields = yield* tools.checkedForm(request, signedIn)
          if (Option.isNone(fields)) return yield* listPage(signedIn, { status: 403, problem: EXPIRED_FORM })
          const form = { name: (fields.value["name"] ?? "").trim(), email: (fields.value["email"] ?? "").trim() }
          const created = yield* Effect.either(directory.createUser({ ...form, apiUser: true }))
          if (Either.isRight(created)) return redirect(`/manage/api_users/${encodeURIComponent(created.right.user.uid)}`, 303)
          switch (created.left._tag) {
            case "InvalidInput":
              return yield* listPage(signedIn, { status: 400, problem: `The ${created.left.message}.`, form })
            case "AlreadyTaken":
              return yield* listPage(signedIn, { status: 409, problem: `That ${created.left.field} is already taken.`, form })
            case "NotAllowed":
              return yield* listPage(signedIn, { status: 403, problem: `${created.left.reason}.`, form })
            default:
              return yield* Effect.fail(created.left)
          }
        })),

    show: (request: HttpServerRequest.HttpServerRequest, uid: string) =>
      asSuperadmin(request, (signedIn) =>
        withApiUser(uid, (user) =>
          userPage(signedIn, user, new URL(request.url, "http://host").searchParams.get("done") === "revoked" ? { notice: "The token is revoked." } : {}))),

    issue: (request: HttpServerRequest.HttpServerRequest, uid: string) =>
      asSuperadmin(request, (signedIn) =>
        withApiUser(uid, (user) =>
          Effect.gen(function*() {
            const fields = yield* tools.checkedForm(request, signedIn)
            if (Option.isNone(fields)) return yield* userPage(signedIn, user, { status: 403, problem: EXPIRED_FORM })
            const days = Number(fields.value["expires_in_days"] ?? "")
            if (!Number.isSafeInteger(days) || days < 1 || days > 3650) {
              return yield* userPage(signedIn, user, { status: 400, problem: "The number of days must be a whole number from 1 to 3650." })
            }
            const applicationName = fields.value["application"] ?? ""
            const issued = yield* Effect.either(directory.issueApiToken(uid, applicationName, { expiresIn: Duration.days(days) }))
            if (Either.isRight(issued)) {
              return yield* userPage(signedIn, user, { issued: { token: issued.right.token, applicationName, expiresAt: issued.right.expiresAt } })
            }
            if (issued.left._tag === "StoreError") return yield* Effect.fail(issued.left)
            const status = issued.left._tag === "NotAllowed" ? 403 : issued.left._tag === "NotFound" ? 404 : 400
            return yield* userPage(signedIn, user, { status, problem: `${issued.left.message}.` })
          }))),

    revoke: (request: HttpServerRequest.HttpServerRequest, uid: string, id: string) =>
      asSuperadmin(request, (signedIn) =>
        withApiUser(uid, (user) =>
          Effect.gen(function*() {
            if (Option.isNone(yield* tools.checkedForm(request, signedIn))) {
              return yield* userPage(signedIn, user, { status: 403, problem: EXPIRED_FORM })
            }
            const held = (yield* store.apiTokensOf(uid)).some((token) => token.id === id)
            if (!held) return yield* userPage(signedIn, user, { status: 404, problem: "This API user holds no such token." })
            yield* directory.revokeToken(id)
            return redirect(`/manage/api_users/${encodeURIComponent(uid)}?done=revoked`, 303)
          })))
  }
})
