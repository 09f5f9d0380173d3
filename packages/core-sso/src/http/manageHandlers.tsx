import { now } from "@civicstack/kit"
import type * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Option } from "effect"
import type { SsoGroups } from "../api/SsoApi"
import type { InvalidInput, NotAllowed, NotFound } from "../domain/errors"
import { roleOf, SIGNIN, SSO_APPLICATION, USER_UPDATE_PERMISSION } from "../domain/permissions"
import type { User } from "../domain/records"
import { roleHeldBy } from "../services/access"
import { Actor } from "../services/Actor"
import { Directory } from "../services/Directory"
import type { UserDetails } from "../services/Directory"
import { EmailLinks } from "../services/EmailLinks"
import type { CurrentSession } from "../services/SignIn"
import { SsoParts } from "../services/SsoParts"
import { TwoStepVerification } from "../services/TwoStep"
import type { AlreadyTaken, StoreError } from "../storage/SsoStore"
import { EventsPage, HomePage, stateOf, USER_STATES, UserPage, UsersPage } from "./pages/manage"
import type { UserFilters, UserRow } from "./pages/manage"
import { ErrorPage } from "./pages/pages"
import { makeApiUserPages } from "./apiUserPages"
import { makeApplicationPages } from "./applicationPages"
import { makePageTools } from "./pageTools"

const PAGE_SIZE = 50
const EVENT_LIMIT = 500

/** A `YYYY-MM-DD` day's start; `undefined` for none given, `null` for something else. */
const dayOf = (text: string): Date | undefined | null => {
  if (text === "") return undefined
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return null
  const day = new Date(`${text}T00:00:00Z`)
  return Number.isNaN(day.getTime()) || day.toISOString().slice(0, 10) !== text ? null : day
}

const ROLE_NAMES = { superadmin: "superadmin", admin: "administrator", user: "user" } as const

const filtersOf = (url: string): UserFilters & { readonly page: number } => {
  const params = new URL(url, "http://host").searchParams
  const page = Number.parseInt(params.get("page") ?? "1", 10)
  return {
    q: (params.get("q") ?? "").trim().slice(0, 200),
    role: params.get("role") ?? "",
    state: params.get("state") ?? "",
    twoStep: params.get("two_step") ?? "",
    page: Number.isSafeInteger(page) && page > 0 ? page : 1
  }
}

const matches = (row: UserRow, filters: UserFilters) => {
  const { locked, role, twoStep, user } = row
  const q = filters.q.toLowerCase()
  if (q !== "" && !user.name.toLowerCase().includes(q) && !user.email.toLowerCase().includes(q)) return false
  if (filters.role === "superadmin" && role !== "superadmin") return false
  if (filters.role === "administrator" && role !== "administrator") return false
  if (filters.role === "user" && role !== "user") return false
  if (filters.role === "api" && role !== "API user") return false
  if ((USER_STATES as ReadonlyArray<string>).includes(filters.state) && filters.state !== stateOf(user, locked)) return false
  if (filters.twoStep === "on" && !twoStep) return false
  if (filters.twoStep === "off" && (twoStep || user.isApiUser)) return false
  return true
}

/** The fields of the permissions form: `grant.<application id>.<permission>` for each box ticked. */
const grantedIn = (fields: Readonly<Record<string, string>>, applicationId: string) =>
  Object.keys(fields)
    .filter((name) => name.startsWith(`grant.${applicationId}.`))
    .map((name) => name.slice(`grant.${applicationId}.`.length))

/**
 * The home page of every signed-in user, and the pages where administrators of the sign-on manage users. Every
 * change goes through the `Directory`, as the admin JSON API's do, in the name of the signed-in administrator.
 */
export const manageHandlers = <ApiId extends string, E, R>(api: HttpApi.HttpApi<ApiId, SsoGroups, E, R>) =>
  HttpApiBuilder.group(api, "manage", (handlers) =>
    Effect.gen(function*() {
      const tools = yield* makePageTools
      const { html, redirect } = tools
      const { store } = yield* SsoParts
      const directory = yield* Directory
      const twoStep = yield* TwoStepVerification
      const emailLinks = yield* EmailLinks
      const applicationPages = yield* makeApplicationPages
      const apiUserPages = yield* makeApiUserPages

      const rowOf = (details: UserDetails, withTwoStep: ReadonlySet<string>, now: number): UserRow => ({
        user: details.user,
        role: details.user.isApiUser ? "API user" : ROLE_NAMES[roleOf(details.permissions[SSO_APPLICATION])],
        locked: details.user.lockedUntil !== null && details.user.lockedUntil.getTime() > now,
        twoStep: withTwoStep.has(details.user.uid)
      })

      const asAdministrator = <Err,>(
        request: HttpServerRequest.HttpServerRequest,
        page: (signedIn: CurrentSession) => Effect.Effect<HttpServerResponse.HttpServerResponse, Err, Actor>
      ) => tools.asRole(request, "admin", page)

      /** The applications whose permissions the signed-in administrator sets: the sign-on's own (roles) for superadmins only. */
      const applicationsManagedBy = (signedIn: CurrentSession) =>
        Effect.gen(function*() {
          const superadmin = (yield* roleHeldBy(store, signedIn.user.uid)) === "superadmin"
          return (yield* directory.applications).filter((application) =>
            !application.retired && (superadmin || application.name !== SSO_APPLICATION))
        })

      const userPage = (
        signedIn: CurrentSession,
        uid: string,
        options: { readonly status?: number; readonly done?: string | undefined; readonly problem?: string } = {}
      ) =>
        Effect.gen(function*() {
          // a store failure is not "no such user": it goes up, for the host's 503
          const found = yield* Effect.catchTag(Effect.asSome(directory.user(uid)), "NotFound", () => Effect.succeedNone)
          if (Option.isNone(found)) {
            return html(<ErrorPage title="No such user" message="There is no user at this address." />, 404)
          }
          const withTwoStep = new Set(yield* store.usersWithTwoStep)
          const row = rowOf(found.value, withTwoStep, (yield* now).getTime())
          const applications = yield* applicationsManagedBy(signedIn)
          return html(
            <UserPage
              user={row.user}
              role={row.role}
              locked={row.locked}
              twoStep={row.twoStep}
              permissions={found.value.permissions}
              applications={applications}
              events={yield* directory.events({ userUid: uid, limit: 50 })}
              csrfToken={signedIn.session.csrfToken}
              done={options.done}
              problem={options.problem}
            />,
            options.status ?? 200
          )
        })

      type Refusal = StoreError | InvalidInput | NotFound | AlreadyTaken | NotAllowed

      /** A form on a user's page: checked, carried out, then back to the page saying what was done. */
      const userAction = (
        request: HttpServerRequest.HttpServerRequest,
        uid: string,
        done: string,
        action: (fields: Readonly<Record<string, string>>, signedIn: CurrentSession) => Effect.Effect<unknown, Refusal, Actor>
      ) =>
        asAdministrator(request, (signedIn) =>
          Effect.gen(function*() {
            const form = yield* tools.checkedForm(request, signedIn)
            if (Option.isNone(form)) {
              return yield* userPage(signedIn, uid, { status: 403, problem: "The form had expired. Reload the page and try again." })
            }
            const outcome = yield* Effect.either(action(form.value, signedIn))
            if (outcome._tag === "Right") return redirect(`/manage/users/${encodeURIComponent(uid)}?done=${done}`, 303)
            switch (outcome.left._tag) {
              case "InvalidInput":
                return yield* userPage(signedIn, uid, { status: 400, problem: `The ${outcome.left.field} ${outcome.left.problem}.` })
              case "NotFound":
                return html(<ErrorPage title="No such user" message="There is no user at this address." />, 404)
              case "AlreadyTaken":
                return yield* userPage(signedIn, uid, { status: 409, problem: `That ${outcome.left.field} is already taken.` })
              case "NotAllowed":
                return yield* userPage(signedIn, uid, { status: 403, problem: `${outcome.left.reason}.` })
              default:
                return yield* Effect.fail(outcome.left)
            }
          }))

      const applicationsOf = (user: User, permissions: UserDetails["permissions"]) =>
        Effect.map(directory.applications, (all) =>
          all.filter((application) =>
            !application.retired && application.redirectUris.length > 0 && application.name !== SSO_APPLICATION &&
            permissions[application.name]?.includes(SIGNIN) === true && !user.isApiUser
          ))

      return handlers
        .handleRaw("home", ({ request }) =>
          Effect.gen(function*() {
            const session = yield* tools.currentSession(request)
            if (Option.isNone(session)) return redirect("/users/sign_in", 302)
            const { user } = session.value
            const details = yield* directory.user(user.uid)
            return html(
              <HomePage
                user={user}
                applications={yield* applicationsOf(user, details.permissions)}
                role={yield* roleHeldBy(store, user.uid)}
                csrfToken={session.value.session.csrfToken}
              />
            )
          }).pipe(Effect.orDie))
        .handleRaw("users", ({ request }) =>
          asAdministrator(request, () =>
            Effect.gen(function*() {
              const filters = filtersOf(request.url)
              const withTwoStep = new Set(yield* store.usersWithTwoStep)
              const at = (yield* now).getTime()
              const rows = (yield* directory.users).map((details) => rowOf(details, withTwoStep, at)).filter((row) => matches(row, filters))
              const pages = Math.max(1, Math.ceil(rows.length / PAGE_SIZE))
              const page = Math.min(filters.page, pages)
              return html(
                <UsersPage
                  rows={rows.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE)}
                  filters={filters}
                  page={page}
                  pages={pages}
                  total={rows.length}
                />
              )
            })))
        .handleRaw("user", ({ path, request }) =>
          asAdministrator(request, (signedIn) =>
            userPage(signedIn, path.uid, { done: new URL(request.url, "http://host").searchParams.get("done") ?? undefined })))
        .handleRaw("setPermissions", ({ path, request }) =>
          userAction(request, path.uid, "permissions", (fields, signedIn) =>
            Effect.gen(function*() {
              const { permissions } = yield* directory.user(path.uid)
              for (const application of yield* applicationsManagedBy(signedIn)) {
                const held = [...(permissions[application.name] ?? [])].sort()
                // the push user's permission has no box: it is kept as it is
                const wanted = [
                  ...grantedIn(fields, application.id).filter((name) => name !== USER_UPDATE_PERMISSION && application.permissions.includes(name)),
                  ...held.filter((name) => name === USER_UPDATE_PERMISSION)
                ].sort()
                if (wanted.join(" ") !== held.join(" ")) yield* directory.setPermissions(path.uid, application.name, wanted)
              }
            })))
        .handleRaw("suspend", ({ path, request }) =>
          userAction(request, path.uid, "suspended", (fields) => directory.suspend(path.uid, (fields["reason"] ?? "").trim())))
        .handleRaw("unsuspend", ({ path, request }) =>
          userAction(request, path.uid, "unsuspended", () => directory.unsuspend(path.uid)))
        .handleRaw("unlock", ({ path, request }) =>
          userAction(request, path.uid, "unlocked", () => directory.unlock(path.uid)))
        .handleRaw("applications", ({ request }) => applicationPages.list(request))
        .handleRaw("newApplication", ({ request }) => applicationPages.newForm(request))
        .handleRaw("createApplication", ({ request }) => applicationPages.create(request))
        .handleRaw("application", ({ path, request }) => applicationPages.show(request, path.id))
        .handleRaw("updateApplication", ({ path, request }) => applicationPages.update(request, path.id))
        .handleRaw("rotateSecret", ({ path, request }) => applicationPages.rotate(request, path.id))
        .handleRaw("events", ({ request }) =>
          asAdministrator(request, () =>
            Effect.gen(function*() {
              const params = new URL(request.url, "http://host").searchParams
              const filters = {
                user: (params.get("user") ?? "").trim(),
                kind: (params.get("kind") ?? "").trim().replaceAll(" ", "_"),
                from: (params.get("from") ?? "").trim(),
                to: (params.get("to") ?? "").trim()
              }
              const since = dayOf(filters.from)
              const until = dayOf(filters.to)
              if (since === null || until === null) {
                return html(<EventsPage rows={[]} filters={filters} limit={EVENT_LIMIT} problem="Enter dates as YYYY-MM-DD." />, 400)
              }
              const user = filters.user === "" ? Option.none() : yield* store.userByEmail(filters.user)
              if (filters.user !== "" && Option.isNone(user)) {
                return html(<EventsPage rows={[]} filters={filters} limit={EVENT_LIMIT} problem="No user has that email address." />)
              }
              const events = yield* directory.events({
                limit: EVENT_LIMIT,
                ...(Option.isSome(user) ? { userUid: user.value.uid } : {}),
                ...(filters.kind === "" ? {} : { kind: filters.kind }),
                ...(since === undefined ? {} : { since }),
                // the day given is included
                ...(until === undefined ? {} : { until: new Date(until.getTime() + 86_400_000) })
              })
              const applications = new Map((yield* directory.applications).map((application) => [application.id, application.name]))
              const emails = new Map((yield* store.listUsers).map((listed) => [listed.uid, listed.email]))
              const rows = events.map((event) => ({
                event,
                userEmail: event.userUid === null ? undefined : emails.get(event.userUid),
                applicationName: event.applicationId === null ? undefined : applications.get(event.applicationId)
              }))
              return html(<EventsPage rows={rows} filters={filters} limit={EVENT_LIMIT} />)
            })))
        .handleRaw("apiUsers", ({ request }) => apiUserPages.list(request))
        .handleRaw("createApiUser", ({ request }) => apiUserPages.create(request))
        .handleRaw("apiUser", ({ path, request }) => apiUserPages.show(request, path.uid))
        .handleRaw("issueApiToken", ({ path, request }) => apiUserPages.issue(request, path.uid))
        .handleRaw("revokeApiToken", ({ path, request }) => apiUserPages.revoke(request, path.uid, path.id))
        .handleRaw("resetTwoStep", ({ path, request }) =>
          userAction(request, path.uid, "two_step_reset", () =>
            Effect.zipRight(Effect.zipRight(directory.user(path.uid), directory.mayManage(path.uid)), twoStep.reset(path.uid))))
        .handleRaw("resendInvitation", ({ path, request }) =>
          userAction(request, path.uid, "invitation_sent", () => emailLinks.resendInvitation(path.uid)))
    }))
