import type * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Duration, Effect } from "effect"
import type { AdminApplication, AdminUser } from "../api/admin"
import { AdminConflict, AdminForbidden, AdminInvalid, AdminNotFound } from "../api/admin"
import type { SsoGroups } from "../api/SsoApi"
import type { InvalidInput, NotAllowed, NotFound } from "../domain/errors"
import { ADMIN, SSO_APPLICATION } from "../domain/permissions"
import type { Application, SsoEvent } from "../domain/records"
import type { UserDetails } from "../services/Directory"
import { Actor } from "../services/Actor"
import { Directory } from "../services/Directory"
import { OAuthServer } from "../services/OAuthServer"
import type { AlreadyTaken, StoreError } from "../storage/SsoStore"
import { header } from "./requests"

const iso = (date: Date | null) => (date === null ? null : date.toISOString())

export const applicationToWire = (application: Application): AdminApplication => ({
  name: application.name,
  description: application.description,
  home_uri: application.homeUri,
  redirect_uris: application.redirectUris,
  permissions: application.permissions,
  push_updates: application.pushUpdates,
  push_format: application.pushFormat,
  require_pkce: application.requirePkce,
  require_2sv: application.requireTwoStep,
  retired: application.retired,
  created_at: application.createdAt.toISOString()
})

export const userToWire = ({ permissions, user }: UserDetails): AdminUser => ({
  uid: user.uid,
  name: user.name,
  email: user.email,
  api_user: user.isApiUser,
  organisation_slug: user.organisationSlug,
  organisation_content_id: user.organisationContentId,
  permissions,
  suspended_at: iso(user.suspendedAt),
  suspension_reason: user.suspensionReason,
  locked_until: iso(user.lockedUntil),
  failed_sign_ins: user.failedSignIns,
  created_at: user.createdAt.toISOString()
})

/** The directory's failures as the admin API answers them; a storage failure is the host's to answer. */
const answered = <A, R>(effect: Effect.Effect<A, StoreError | InvalidInput | NotFound | AlreadyTaken | NotAllowed, R>) =>
  effect.pipe(
    Effect.catchTags({
      NotAllowed: (error) => new AdminForbidden({ error: error.reason }),
      InvalidInput: (error) => new AdminInvalid({ error: `Invalid request: ${error.message}`, details: { [error.field]: error.problem } }),
      NotFound: (error) => new AdminNotFound({ error: error.message }),
      AlreadyTaken: (error) => new AdminConflict({ error: `That ${error.field} is already taken` }),
      StoreError: Effect.die
    })
  )

/** Admin answers carry client secrets, tokens and people's details: no cache keeps them. */
const notStored = HttpApp.appendPreResponseHandler((_request, response) =>
  Effect.succeed(HttpServerResponse.setHeader(response, "cache-control", "no-store"))
)

/** 401 answers carry `WWW-Authenticate`, which the declared error cannot. */
const unauthorized = (description: string) =>
  HttpServerResponse.unsafeJson({ error: description }, {
    status: 401,
    headers: { "www-authenticate": `Bearer realm="civicstack", error="invalid_token"` }
  })

export const adminHandlers = <ApiId extends string, E, R>(
  api: HttpApi.HttpApi<ApiId, SsoGroups, E, R>
) =>
  HttpApiBuilder.group(api, "admin", (handlers) =>
    Effect.gen(function*() {
      const server = yield* OAuthServer
      const directory = yield* Directory

      /** Runs `action` for an admin; anyone else gets 401 (no usable token) or 403. */
      const asAdmin = <A, Err, Req>(request: HttpServerRequest.HttpServerRequest, action: Effect.Effect<A, Err, Req>) =>
        Effect.gen(function*() {
          yield* notStored
          const caller = yield* server.caller(header(request, "authorization"), SSO_APPLICATION).pipe(
            Effect.map((found) => ({ ok: true as const, ...found })),
            Effect.catchTag("InvalidToken", (error) => Effect.succeed({ ok: false as const, description: error.error_description })),
            Effect.catchTag("StoreError", Effect.die)
          )
          if (!caller.ok) return unauthorized(caller.description)
          if (!caller.permissions.includes(ADMIN)) {
            return yield* new AdminForbidden({ error: "This token's user is not an administrator of the sign-on" })
          }
          return yield* Effect.provideService(action, Actor, { kind: "administrator", uid: caller.user.uid, email: caller.user.email })
        })

      const details = (effect: Effect.Effect<UserDetails, StoreError | InvalidInput | NotFound | AlreadyTaken | NotAllowed>) =>
        answered(Effect.map(effect, (found) => ({ user: userToWire(found) })))

      const eventToWire = (event: SsoEvent, applications: ReadonlyMap<string, string>) => ({
        at: event.at.toISOString(),
        kind: event.kind,
        user: event.userUid,
        application: event.applicationId === null ? null : applications.get(event.applicationId) ?? null,
        detail: event.detail
      })

      return handlers
        .handle("createApplication", ({ payload, request }) =>
          asAdmin(request, answered(Effect.map(directory.createApplication({
            name: payload.name,
            homeUri: payload.home_uri,
            redirectUris: payload.redirect_uris,
            ...(payload.description === undefined ? {} : { description: payload.description }),
            ...(payload.permissions === undefined ? {} : { permissions: payload.permissions }),
            ...(payload.push_updates === undefined ? {} : { pushUpdates: payload.push_updates }),
            ...(payload.push_format === undefined ? {} : { pushFormat: payload.push_format }),
            ...(payload.require_pkce === undefined ? {} : { requirePkce: payload.require_pkce }),
            ...(payload.require_2sv === undefined ? {} : { requireTwoStep: payload.require_2sv })
          }), ({ application, clientId, clientSecret }) => ({
            application: { ...applicationToWire(application), client_id: clientId, client_secret: clientSecret }
          })))))
        .handle("listApplications", ({ request }) =>
          asAdmin(request, answered(Effect.map(directory.applications, (all) => ({ applications: all.map(applicationToWire) })))))
        .handle("createUser", ({ payload, request }) =>
          asAdmin(request, details(directory.createUser({
            email: payload.email,
            name: payload.name,
            ...(payload.password === undefined ? {} : { password: payload.password }),
            ...(payload.admin === undefined ? {} : { admin: payload.admin }),
            ...(payload.api_user === undefined ? {} : { apiUser: payload.api_user }),
            ...(payload.organisation_slug === undefined ? {} : { organisationSlug: payload.organisation_slug })
          }))))
        .handle("listUsers", ({ request }) =>
          asAdmin(request, answered(Effect.map(directory.users, (users) => ({ users: users.map(userToWire) })))))
        .handle("getUser", ({ path, request }) => asAdmin(request, details(directory.user(path.uid))))
        .handle("updateUser", ({ path, payload, request }) =>
          asAdmin(request, details(directory.updateUser(path.uid, {
            ...(payload.name === undefined ? {} : { name: payload.name }),
            ...(payload.email === undefined ? {} : { email: payload.email })
          }))))
        .handle("setPermissions", ({ path, payload, request }) =>
          asAdmin(request, details(directory.setPermissions(path.uid, payload.application, payload.permissions))))
        .handle("suspendUser", ({ path, payload, request }) =>
          asAdmin(request, details(directory.suspend(path.uid, payload.reason))))
        .handle("unsuspendUser", ({ path, request }) => asAdmin(request, details(directory.unsuspend(path.uid))))
        .handle("unlockUser", ({ path, request }) => asAdmin(request, details(directory.unlock(path.uid))))
        .handle("issueToken", ({ path, payload, request }) =>
          asAdmin(request, answered(Effect.map(
            directory.issueApiToken(path.uid, payload.application, {
              ...(payload.expires_in === undefined ? {} : { expiresIn: Duration.seconds(payload.expires_in) })
            }),
            (issued) => ({
              access_token: issued.token,
              expires_in: Math.round((issued.expiresAt.getTime() - issued.issuedAt.getTime()) / 1000),
              id: issued.id
            })
          ))))
        .handle("revokeToken", ({ path, request }) => asAdmin(request, answered(directory.revokeToken(path.id))))
        .handle("events", ({ request, urlParams }) =>
          asAdmin(request, answered(Effect.gen(function*() {
            const applications = new Map((yield* directory.applications).map((application) => [application.id, application.name]))
            const events = yield* directory.events({ ...(urlParams.user === undefined ? {} : { userUid: urlParams.user }), limit: 500 })
            return { events: events.map((event) => eventToWire(event, applications)) }
          }))))
    }))
