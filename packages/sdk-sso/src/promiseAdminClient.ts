import type { AdminApplication, AdminEvent, AdminUser } from "@civicstack/core-sso/api"
import { Effect, Layer, type Redacted } from "effect"
import {
  type CreatedApplication,
  type IssuedToken,
  type IssueTokenInput,
  type NewApplicationInput,
  type NewUserInput,
  type PermissionsInput,
  SsoAdminClient,
  type SsoAdminClientService,
  type UserChangesInput
} from "./AdminClient"
import { fetchHttpClient, promiseRunner } from "@civicstack/kit/sdk"

export interface CreateSsoAdminClientOptions {
  /** Where the SSO is served, e.g. `https://signon.example.org`. */
  readonly baseUrl: string | URL
  /** A bearer token whose user has the `admin` permission on the SSO's own application (`sso`). */
  readonly token: string | Redacted.Redacted<string>
  /** Used instead of the global `fetch`. */
  readonly fetch?: typeof fetch | undefined
}

/**
 * The admin API with Promises. A call rejects with the same error classes as the Effect client (`AdminUnauthorized`,
 * `AdminForbidden`, `AdminNotFound`, `AdminConflict`, `AdminInvalid`, `SsoClientError`), so `instanceof` works.
 * `close()` it when done.
 */
export interface SsoAdminPromiseClient {
  readonly createApplication: (input: NewApplicationInput) => Promise<CreatedApplication>
  readonly listApplications: () => Promise<ReadonlyArray<AdminApplication>>
  readonly createUser: (input: NewUserInput) => Promise<AdminUser>
  readonly listUsers: () => Promise<ReadonlyArray<AdminUser>>
  readonly getUser: (uid: string) => Promise<AdminUser>
  readonly updateUser: (uid: string, changes: UserChangesInput) => Promise<AdminUser>
  readonly setPermissions: (uid: string, input: PermissionsInput) => Promise<AdminUser>
  readonly suspendUser: (uid: string, reason: string) => Promise<AdminUser>
  readonly unsuspendUser: (uid: string) => Promise<AdminUser>
  readonly unlockUser: (uid: string) => Promise<AdminUser>
  readonly issueToken: (uid: string, input: IssueTokenInput) => Promise<IssuedToken>
  readonly revokeToken: (id: string) => Promise<void>
  readonly events: (userUid?: string) => Promise<ReadonlyArray<typeof AdminEvent.Type>>
  readonly close: () => Promise<void>
}

export const createSsoAdminClient = (options: CreateSsoAdminClientOptions): SsoAdminPromiseClient => {
  const runner = promiseRunner(
    SsoAdminClient.layer({ baseUrl: options.baseUrl, token: options.token }).pipe(Layer.provide(fetchHttpClient(options.fetch))),
    "SSO admin client"
  )
  const call = <A, E>(use: (client: SsoAdminClientService) => Effect.Effect<A, E>) =>
    runner.run(Effect.flatMap(SsoAdminClient, use))
  return {
    createApplication: (input) => call((client) => client.createApplication(input)),
    listApplications: () => call((client) => client.listApplications),
    createUser: (input) => call((client) => client.createUser(input)),
    listUsers: () => call((client) => client.listUsers),
    getUser: (uid) => call((client) => client.getUser(uid)),
    updateUser: (uid, changes) => call((client) => client.updateUser(uid, changes)),
    setPermissions: (uid, input) => call((client) => client.setPermissions(uid, input)),
    suspendUser: (uid, reason) => call((client) => client.suspendUser(uid, reason)),
    unsuspendUser: (uid) => call((client) => client.unsuspendUser(uid)),
    unlockUser: (uid) => call((client) => client.unlockUser(uid)),
    issueToken: (uid, input) => call((client) => client.issueToken(uid, input)),
    revokeToken: (id) => call((client) => client.revokeToken(id)),
    events: (userUid) => call((client) => client.events(userUid)),
    close: runner.close
  }
}
