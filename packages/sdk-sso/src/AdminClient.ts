import { ClientTag } from "@civicstack/kit/sdk"
import {
  type AdminApplication,
  type AdminConflict,
  type AdminEvent,
  type AdminForbidden,
  AdminGroup,
  AdminInvalid,
  type AdminNotFound,
  type AdminUnauthorized,
  type AdminUser,
  type CreateApplicationBody,
  type CreateUserBody,
  type IssueTokenBody,
  type SetPermissionsBody,
  type UpdateUserBody
} from "@civicstack/core-sso/api"
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import * as HttpApiError from "@effect/platform/HttpApiError"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { Effect, Redacted } from "effect"
import type { SsoClientError } from "./errors"
import { refineFailures } from "./failures"

/** The admin endpoints on their own: what this client speaks. */
export class SsoAdminApi extends HttpApi.make("sso-admin").add(AdminGroup) {}

export interface SsoAdminClientOptions {
  /** Where the SSO is served, e.g. `https://signon.example.org` (a path prefix is kept). */
  readonly baseUrl: string | URL
  /** A bearer token whose user has the `admin` permission on the SSO's own application (`sso`). */
  readonly token: string | Redacted.Redacted<string>
}

/** Every failure an admin call can end with: the API's own refusals, and transport or contract failures. */
export type SsoAdminError =
  | AdminUnauthorized
  | AdminForbidden
  | AdminNotFound
  | AdminConflict
  | AdminInvalid
  | SsoClientError

export type NewApplicationInput = typeof CreateApplicationBody.Type
export type NewUserInput = typeof CreateUserBody.Type
export type UserChangesInput = typeof UpdateUserBody.Type
export type PermissionsInput = typeof SetPermissionsBody.Type
export type IssueTokenInput = typeof IssueTokenBody.Type
export type CreatedApplication = AdminApplication & { readonly client_id: string; readonly client_secret: string }
export interface IssuedToken {
  readonly access_token: string
  readonly expires_in: number
  readonly id: string
}

type Call<A> = Effect.Effect<A, SsoAdminError>

export interface SsoAdminClientService {
  /** The answer holds the client secret, shown this once. */
  readonly createApplication: (input: NewApplicationInput) => Call<CreatedApplication>
  readonly listApplications: Call<ReadonlyArray<AdminApplication>>
  readonly createUser: (input: NewUserInput) => Call<AdminUser>
  readonly listUsers: Call<ReadonlyArray<AdminUser>>
  readonly getUser: (uid: string) => Call<AdminUser>
  readonly updateUser: (uid: string, changes: UserChangesInput) => Call<AdminUser>
  readonly setPermissions: (uid: string, input: PermissionsInput) => Call<AdminUser>
  /** Revokes the user's tokens and pushes an update and a reauth to the applications. */
  readonly suspendUser: (uid: string, reason: string) => Call<AdminUser>
  readonly unsuspendUser: (uid: string) => Call<AdminUser>
  readonly unlockUser: (uid: string) => Call<AdminUser>
  /** An API token issued in advance (shown once). */
  readonly issueToken: (uid: string, input: IssueTokenInput) => Call<IssuedToken>
  readonly revokeToken: (id: string) => Call<void>
  /** Newest first; only the user's when `userUid` is given. */
  readonly events: (userUid?: string) => Call<ReadonlyArray<typeof AdminEvent.Type>>
}

/** A 400 in the platform's own shape (the SSO embedded without the error envelope) is still an `AdminInvalid`. */
const platformRefusalAsInvalid = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.catchIf(
    effect,
    (error): error is Extract<E, HttpApiError.HttpApiDecodeError> => error instanceof HttpApiError.HttpApiDecodeError,
    (error) => Effect.fail(new AdminInvalid({ error: error.message, details: { issues: error.issues } }))
  )

const settle = <A, E, R>(effect: Effect.Effect<A, E, R>) => refineFailures(platformRefusalAsInvalid(effect))

/** Builds a client of the SSO's admin API on the `HttpClient` in context. */
export const makeSsoAdminClient = (
  options: SsoAdminClientOptions
): Effect.Effect<SsoAdminClientService, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const token = Redacted.isRedacted(options.token) ? options.token : Redacted.make(options.token)
    const { admin } = yield* HttpApiClient.make(SsoAdminApi, {
      baseUrl: options.baseUrl,
      transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(Redacted.value(token)))
    })
    const byUid = (uid: string) => ({ path: { uid } })
    return {
      createApplication: (payload) => settle(admin.createApplication({ payload })).pipe(Effect.map((body) => body.application)),
      listApplications: settle(admin.listApplications()).pipe(Effect.map((body) => body.applications)),
      createUser: (payload) => settle(admin.createUser({ payload })).pipe(Effect.map((body) => body.user)),
      listUsers: settle(admin.listUsers()).pipe(Effect.map((body) => body.users)),
      getUser: (uid) => settle(admin.getUser(byUid(uid))).pipe(Effect.map((body) => body.user)),
      updateUser: (uid, payload) => settle(admin.updateUser({ ...byUid(uid), payload })).pipe(Effect.map((body) => body.user)),
      setPermissions: (uid, payload) =>
        settle(admin.setPermissions({ ...byUid(uid), payload })).pipe(Effect.map((body) => body.user)),
      suspendUser: (uid, reason) =>
        settle(admin.suspendUser({ ...byUid(uid), payload: { reason } })).pipe(Effect.map((body) => body.user)),
      unsuspendUser: (uid) => settle(admin.unsuspendUser(byUid(uid))).pipe(Effect.map((body) => body.user)),
      unlockUser: (uid) => settle(admin.unlockUser(byUid(uid))).pipe(Effect.map((body) => body.user)),
      issueToken: (uid, payload) => settle(admin.issueToken({ ...byUid(uid), payload })),
      revokeToken: (id) => settle(admin.revokeToken({ path: { id } })),
      events: (userUid) =>
        settle(admin.events({ urlParams: userUid === undefined ? {} : { user: userUid } })).pipe(
          Effect.map((body) => body.events)
        )
    }
  })

/** The SSO's admin API as an Effect service. */
export class SsoAdminClient extends ClientTag<SsoAdminClient, SsoAdminClientService>()(
  "@civicstack/sdk-sso/SsoAdminClient",
  makeSsoAdminClient
) {}
