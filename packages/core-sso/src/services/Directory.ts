import { now } from "@civicstack/kit"
import { Context, Duration, Effect, Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import { EmailLinkRefused, InvalidInput, NotAllowed, NotFound } from "../domain/errors"
import {
  ADMIN,
  normalisePermissions,
  SERVICE_APPLICATIONS,
  SIGNIN,
  SSO_APPLICATION,
  SUPERADMIN,
  USER_UPDATE_PERMISSION
} from "../domain/permissions"
import { apiTokenRecord } from "../domain/records"
import type { Application, EmailLink, PushFormat, SsoEvent, User } from "../domain/records"
import { redirectUriProblem } from "../domain/redirectUris"
import { hashSecret, isSecretShaped, newSecret } from "../domain/secrets"
import { absoluteHttpUrlProblem, emailProblem, permissionsProblem, textProblem } from "../domain/userInput"
import type { PushKind } from "../domain/pushes"
import type { AlreadyTaken, EventFilter, UserChanges } from "../storage/SsoStore"
import { StoreError } from "../storage/SsoStore"
import { enqueuePushes } from "./pushQueue"
import { roleHeldBy } from "./access"
import { Actor, actorDetail } from "./Actor"
import { passwordProblem } from "./Passwords"
import { SsoParts } from "./SsoParts"

export interface NewApplication {
  readonly name: string
  readonly description?: string
  readonly homeUri: string
  /** Where users may be sent back after signing in; none for an application used only with API tokens. */
  readonly redirectUris: ReadonlyArray<string>
  /** Beyond `signin`, which every application has. */
  readonly permissions?: ReadonlyArray<string>
  readonly pushUpdates?: boolean
  readonly pushFormat?: PushFormat
  readonly requirePkce?: boolean
  readonly requireTwoStep?: boolean
  /** Credentials chosen by the caller (bootstrap files); otherwise new ones are made. */
  readonly clientId?: string
  readonly clientSecret?: string
}

/** What an application's edit may change; its credentials change only by rotation. */
export type ApplicationChanges = Partial<Omit<NewApplication, "clientId" | "clientSecret">>

/** An application with the credentials that are shown this once. */
export interface CreatedApplication {
  readonly application: Application
  readonly clientId: string
  readonly clientSecret: string
}

export interface NewUser {
  readonly email: string
  readonly name: string
  readonly password?: string
  /** `signin`, `admin` and `superadmin` on the SSO's own application. */
  readonly admin?: boolean
  readonly apiUser?: boolean
  readonly organisationSlug?: string | null
  readonly organisationContentId?: string | null
}

/** A user as administrators see them: with permissions by application name, suspension and lock state. */
export interface UserDetails {
  readonly user: User
  readonly permissions: Readonly<Record<string, ReadonlyArray<string>>>
}

export interface IssuedApiToken {
  readonly id: string
  readonly token: string
  readonly issuedAt: Date
  readonly expiresAt: Date
}

type Failure = StoreError | AlreadyTaken | InvalidInput | NotFound | NotAllowed

const check = (field: string, problem: string | undefined) =>
  problem === undefined ? Effect.void : Effect.fail(new InvalidInput({ field, problem }))

/**
 * The administration of applications, users, permissions and API tokens: the admin API, the CLI and bootstrap
 * files all go through it, so each change is validated and logged in one place.
 */
export class Directory extends Context.Tag("@civicstack/core-sso/Directory")<Directory, {
  readonly createApplication: (input: NewApplication) => Effect.Effect<CreatedApplication, Failure>
  /**
   * Creates the application, or brings the one of that name in line with `input`: its credentials change only
   * when `input` gives them. New credentials that were made here are returned.
   */
  readonly ensureApplication: (
    input: NewApplication
  ) => Effect.Effect<{ readonly application: Application; readonly created: Option.Option<CreatedApplication> }, Failure>
  readonly application: (name: string) => Effect.Effect<Application, StoreError | NotFound>
  /**
   * Changes an application's name, description, URIs, permissions and settings. The sign-on's own application and the
   * other services' keep their names (the services find them by name) and the sign-on's its permissions (its roles).
   */
  readonly updateApplication: (name: string, changes: ApplicationChanges) => Effect.Effect<Application, Failure>
  /** A new client secret for the application, shown this once; the old one stops working at once. */
  readonly rotateClientSecret: (
    name: string
  ) => Effect.Effect<{ readonly application: Application; readonly clientSecret: string }, Failure>
  readonly applications: Effect.Effect<ReadonlyArray<Application>, StoreError>
  readonly createUser: (input: NewUser) => Effect.Effect<UserDetails, Failure>
  readonly user: (uid: string) => Effect.Effect<UserDetails, StoreError | NotFound>
  readonly userByEmail: (email: string) => Effect.Effect<UserDetails, StoreError | NotFound>
  readonly users: Effect.Effect<ReadonlyArray<UserDetails>, StoreError>
  readonly updateUser: (uid: string, changes: UserChanges) => Effect.Effect<UserDetails, Failure>
  /**
   * Sets a new password, ends the user's sessions (but `keepSessionHash`, the session of a user changing their own),
   * revokes the tokens they got by signing in, ends their emailed links and any lock. With `usingLink` (an emailed
   * link's id) the change is made only if that link's use, in the same transaction, is its first.
   */
  readonly setPassword: (
    uid: string,
    password: string,
    options?: { readonly keepSessionHash?: string; readonly usingLink?: EmailLink }
  ) => Effect.Effect<void, Failure | EmailLinkRefused>
  /** Replaces the user's permissions on the named application. */
  readonly setPermissions: (
    uid: string,
    applicationName: string,
    permissions: ReadonlyArray<string>
  ) => Effect.Effect<UserDetails, Failure>
  /** Suspends the user and revokes every token they hold. */
  readonly suspend: (uid: string, reason: string) => Effect.Effect<UserDetails, Failure>
  readonly unsuspend: (uid: string) => Effect.Effect<UserDetails, StoreError | NotFound | NotAllowed>
  readonly unlock: (uid: string) => Effect.Effect<UserDetails, StoreError | NotFound | NotAllowed>
  /**
   * Whether the actor may change the user: a superadmin (or an operator's tool) anyone, an admin users who are not
   * administrators, a user only themselves.
   */
  readonly mayManage: (uid: string) => Effect.Effect<void, StoreError | NotAllowed>
  /** A long-lived access token for an API user, issued in advance. */
  readonly issueApiToken: (
    uid: string,
    applicationName: string,
    options?: { readonly expiresIn?: Duration.Duration; readonly token?: string }
  ) => Effect.Effect<IssuedApiToken, Failure>
  readonly revokeToken: (id: string) => Effect.Effect<void, StoreError | NotFound | NotAllowed>
  readonly events: (filter: EventFilter & { readonly limit?: number }) => Effect.Effect<ReadonlyArray<SsoEvent>, StoreError>
}>() {
  static readonly layer = Layer.effect(
    Directory,
    Effect.gen(function*() {
      const parts = yield* SsoParts
      const { passwords, settings, store } = parts

      /** Queues the pushes of a change, in the change's transaction. */
      const push = (uid: string, kinds: ReadonlyArray<PushKind>, only?: (application: Application) => boolean) =>
        enqueuePushes(uid, kinds, only).pipe(
          Effect.provideService(SsoParts, parts),
          Effect.catchTag("JobQueueError", (cause) => new StoreError({ message: "sso: queueing pushes failed", cause }))
        )

      const record = (kind: string, userUid: string | null, applicationId: string | null, detail: Record<string, unknown> = {}) =>
        Effect.gen(function*() {
          const actor = actorDetail(yield* Actor)
          yield* store.appendEvent({ at: yield* now, kind, userUid, applicationId, detail: { ...detail, actor } })
        })

      /** The acting administrator's role; operators' tools and the service itself act as superadmins. */
      const actingRole = Effect.flatMap(Actor, (actor) =>
        actor.kind === "administrator"
          ? roleHeldBy(store, actor.uid)
          : Effect.succeed(actor.kind === "user" ? "user" as const : "superadmin" as const))

      const superadminOnly = (what: string) =>
        Effect.flatMap(actingRole, (role) =>
          role === "superadmin" ? Effect.void : Effect.fail(new NotAllowed({ reason: `Only a superadmin can ${what}` })))

      const mayManage = (uid: string) =>
        Effect.gen(function*() {
          const actor = yield* Actor
          if (actor.kind === "user") {
            if (actor.uid === uid) return
            return yield* new NotAllowed({ reason: "A user can change only their own account" })
          }
          if ((yield* actingRole) === "superadmin") return
          if ((yield* roleHeldBy(store, uid)) !== "user") {
            return yield* new NotAllowed({ reason: "Only a superadmin can change an administrator" })
          }
        })

      const applicationNamed = (name: string) =>
        Effect.flatMap(store.applicationByName(name), Option.match({
          onNone: () => Effect.fail(new NotFound({ what: "application" })),
          onSome: Effect.succeed
        }))

      const detailsOf = (user: User) =>
        Effect.gen(function*() {
          const held = yield* store.permissionsOf(user.uid)
          const permissions: Record<string, ReadonlyArray<string>> = {}
          for (const { applicationId, permissions: names } of held) {
            const application = yield* store.applicationById(applicationId)
            if (Option.isSome(application)) permissions[application.value.name] = names
          }
          return { user, permissions }
        })

      const found = (user: Option.Option<User>): Effect.Effect<UserDetails, StoreError | NotFound> =>
        Option.match(user, { onNone: () => Effect.fail(new NotFound({ what: "user" })), onSome: detailsOf })

      const userDetails = (uid: string) => Effect.flatMap(store.userByUid(uid), found)

      const validateApplication = (input: NewApplication) =>
        Effect.all([
          check("name", textProblem(input.name, { min: 1, max: 100 })),
          check("description", input.description === undefined ? undefined : textProblem(input.description, { min: 0, max: 1000 })),
          check("home_uri", absoluteHttpUrlProblem(input.homeUri)),
          ...input.redirectUris.map((uri) => check("redirect_uris", redirectUriProblem(uri, { production: settings.production }))),
          check("permissions", permissionsProblem(input.permissions ?? [])),
          check("client_id", input.clientId === undefined || isSecretShaped(input.clientId) ? undefined : "must be 32 lowercase hex characters"),
          check("client_secret", input.clientSecret === undefined || isSecretShaped(input.clientSecret) ? undefined : "must be 32 lowercase hex characters")
        ], { discard: true })

      const createApplication = (input: NewApplication) =>
        Effect.gen(function*() {
          yield* superadminOnly("manage applications")
          yield* validateApplication(input)
          const clientId = input.clientId ?? newSecret()
          const clientSecret = input.clientSecret ?? newSecret()
          const application: Application = {
            ...applicationFields(input, input.pushUpdates ?? false),
            id: randomUUID(),
            clientIdHash: hashSecret(clientId),
            clientSecretHash: hashSecret(clientSecret),
            retired: false,
            createdAt: yield* now
          }
          yield* store.insertApplication(application)
          yield* record("application_created", null, application.id, { name: application.name })
          return { application, clientId, clientSecret }
        })

      const applicationFields = (input: NewApplication, pushUpdates: boolean) => ({
        name: input.name,
        description: input.description ?? "",
        homeUri: input.homeUri,
        redirectUris: input.redirectUris,
        permissions: normalisePermissions([SIGNIN, ...(pushUpdates ? [USER_UPDATE_PERMISSION] : []), ...(input.permissions ?? [])]),
        pushUpdates,
        pushFormat: input.pushFormat ?? "seed",
        requirePkce: input.requirePkce ?? false,
        requireTwoStep: input.requireTwoStep ?? false
      })

      const ensureApplication = (input: NewApplication) =>
        Effect.gen(function*() {
          yield* superadminOnly("manage applications")
          const existing = yield* store.applicationByName(input.name)
          if (Option.isNone(existing)) {
            const created = yield* createApplication(input)
            return { application: created.application, created: Option.some(created) }
          }
          yield* validateApplication(input)
          const current = existing.value
          const wanted: Application = {
            ...current,
            ...applicationFields(input, input.pushUpdates ?? current.pushUpdates),
            clientIdHash: input.clientId === undefined ? current.clientIdHash : hashSecret(input.clientId),
            clientSecretHash: input.clientSecret === undefined ? current.clientSecretHash : hashSecret(input.clientSecret)
          }
          if (JSON.stringify(wanted) !== JSON.stringify(current)) {
            yield* store.updateApplication(wanted)
            yield* record("application_updated", null, current.id, { name: current.name })
          }
          return { application: wanted, created: Option.none() }
        })

      const setPermissionsOn = (uid: string, application: Application, permissions: ReadonlyArray<string>) =>
        Effect.gen(function*() {
          yield* check("permissions", permissionsProblem(permissions))
          const unknown = permissions.filter((name) => !application.permissions.includes(name))
          yield* check("permissions", unknown.length === 0 ? undefined : `are not known to ${application.name}: ${unknown.join(", ")}`)
          const before = (yield* store.permissionsOf(uid)).find((held) => held.applicationId === application.id)
          yield* store.setPermissions(uid, application.id, normalisePermissions(permissions))
          yield* record("permissions_changed", uid, application.id, { permissions: normalisePermissions(permissions) })
          yield* push(uid, ["update"])
          if (before?.permissions.includes(SIGNIN) === true && !permissions.includes(SIGNIN)) {
            yield* push(uid, ["reauth"], (target) => target.id === application.id)
          }
        })

      const createUser = (input: NewUser) =>
        Effect.gen(function*() {
          if (input.admin === true || input.apiUser === true) yield* superadminOnly("create administrators and API users")
          yield* check("email", emailProblem(input.email))
          yield* check("name", textProblem(input.name, { min: 1, max: 200 }))
          if (input.password !== undefined) yield* check("password", passwordProblem(input.password))
          const ssoApplication = input.admin === true ? Option.some(yield* applicationNamed(SSO_APPLICATION)) : Option.none()
          const user: User = {
            uid: randomUUID(),
            name: input.name.trim(),
            email: input.email.trim(),
            passwordHash: input.password === undefined ? null : yield* passwords.hash(input.password),
            isApiUser: input.apiUser ?? false,
            organisationSlug: input.organisationSlug ?? null,
            organisationContentId: input.organisationContentId ?? null,
            suspendedAt: null,
            suspensionReason: null,
            failedSignIns: 0,
            lockedUntil: null,
            createdAt: yield* now
          }
          yield* store.insertUser(user)
          yield* record("user_created", user.uid, null, { api_user: user.isApiUser })
          if (Option.isSome(ssoApplication)) yield* setPermissionsOn(user.uid, ssoApplication.value, [SIGNIN, ADMIN, SUPERADMIN])
          return yield* detailsOf(user)
        })

      const existing = (uid: string) =>
        Effect.flatMap(store.userByUid(uid), Option.match({
          onNone: () => Effect.fail(new NotFound({ what: "user" })),
          onSome: Effect.succeed
        }))

      return {
        createApplication,
        ensureApplication,
        application: applicationNamed,
        updateApplication: (name, changes) =>
          Effect.gen(function*() {
            yield* superadminOnly("manage applications")
            const current = yield* applicationNamed(name)
            const builtIn = current.name === SSO_APPLICATION || (SERVICE_APPLICATIONS as ReadonlyArray<string>).includes(current.name)
            if (builtIn && changes.name !== undefined && changes.name !== current.name) {
              return yield* new NotAllowed({ reason: `The ${current.name} application keeps its name: the services find it by it` })
            }
            const samePermissions = changes.permissions === undefined ||
              normalisePermissions([SIGNIN, ...changes.permissions]).join(" ") === current.permissions.join(" ")
            if (current.name === SSO_APPLICATION && !samePermissions) {
              return yield* new NotAllowed({ reason: "The sign-on's own permissions are its roles and do not change" })
            }
            const input: NewApplication = {
              name: current.name,
              description: current.description,
              homeUri: current.homeUri,
              redirectUris: current.redirectUris,
              permissions: current.permissions,
              pushUpdates: current.pushUpdates,
              pushFormat: current.pushFormat,
              requirePkce: current.requirePkce,
              requireTwoStep: current.requireTwoStep,
              ...changes
            }
            yield* validateApplication(input)
            const wanted: Application = { ...current, ...applicationFields(input, input.pushUpdates ?? false) }
            yield* store.updateApplication(wanted)
            yield* record("application_updated", null, current.id, { name: wanted.name, fields: Object.keys(changes) })
            return wanted
          }),
        rotateClientSecret: (name) =>
          Effect.gen(function*() {
            yield* superadminOnly("manage applications")
            const current = yield* applicationNamed(name)
            const clientSecret = newSecret()
            const application = { ...current, clientSecretHash: hashSecret(clientSecret) }
            yield* store.updateApplication(application)
            yield* record("client_secret_rotated", null, current.id, { name: current.name })
            return { application, clientSecret }
          }),
        applications: store.listApplications,
        createUser,
        user: userDetails,
        userByEmail: (email) => Effect.flatMap(store.userByEmail(email), found),
        users: Effect.flatMap(store.listUsers, (users) => Effect.forEach(users, detailsOf)),
        updateUser: (uid, changes) =>
          Effect.gen(function*() {
            yield* mayManage(uid)
            if (changes.email !== undefined) yield* check("email", emailProblem(changes.email))
            if (changes.name !== undefined) yield* check("name", textProblem(changes.name, { min: 1, max: 200 }))
            const updated = yield* store.atomically(Effect.gen(function*() {
              const updated = yield* store.updateUser(uid, changes)
              if (Option.isNone(updated)) return yield* new NotFound({ what: "user" })
              yield* record("user_updated", uid, null, { fields: Object.keys(changes) })
              yield* push(uid, ["update"])
              return updated.value
            }))
            return yield* detailsOf(updated)
          }),
        setPassword: (uid, password, options = {}) =>
          Effect.gen(function*() {
            yield* mayManage(uid)
            yield* check("password", passwordProblem(password))
            yield* existing(uid)
            const passwordHash = yield* passwords.hash(password)
            const at = yield* now
            const link = options.usingLink
            yield* store.atomically(Effect.gen(function*() {
              if (link !== undefined && !(yield* store.useEmailLink(link.id, at))) return yield* new EmailLinkRefused({ reason: "used" })
              yield* store.setPasswordHash(uid, passwordHash)
              yield* store.clearFailedSignIns(uid)
              yield* store.endEmailLinksOf(uid, at)
              // whoever knew the old password is signed out everywhere
              const revoked = yield* store.revokeTokens({ chainsOf: uid }, at)
              yield* store.deleteSessionsOf(uid, options.keepSessionHash === undefined ? undefined : { except: options.keepSessionHash })
              yield* record("password_changed", uid, null, {
                revoked_tokens: revoked,
                ...(link === undefined ? {} : { link: link.purpose })
              })
              yield* push(uid, ["reauth"])
            }))
          }),
        setPermissions: (uid, applicationName, permissions) =>
          Effect.gen(function*() {
            yield* mayManage(uid)
            if (applicationName === SSO_APPLICATION) yield* superadminOnly("grant roles on the sign-on")
            yield* existing(uid)
            const application = yield* applicationNamed(applicationName)
            yield* store.atomically(setPermissionsOn(uid, application, permissions))
            return yield* userDetails(uid)
          }),
        suspend: (uid, reason) =>
          Effect.gen(function*() {
            yield* mayManage(uid)
            yield* check("reason", textProblem(reason, { min: 1, max: 500 }))
            const at = yield* now
            const suspended = yield* store.atomically(Effect.gen(function*() {
              const suspended = yield* store.setSuspension(uid, { at, reason })
              if (Option.isNone(suspended)) return yield* new NotFound({ what: "user" })
              const revoked = yield* store.revokeTokens({ userUid: uid }, at)
              yield* store.deleteSessionsOf(uid)
              yield* record("user_suspended", uid, null, { reason, revoked_tokens: revoked })
              yield* push(uid, ["update", "reauth"])
              return suspended.value
            }))
            return yield* detailsOf(suspended)
          }),
        unsuspend: (uid) =>
          Effect.gen(function*() {
            yield* mayManage(uid)
            const user = yield* store.atomically(Effect.gen(function*() {
              const user = yield* store.setSuspension(uid, null)
              if (Option.isNone(user)) return yield* new NotFound({ what: "user" })
              yield* record("user_unsuspended", uid, null)
              yield* push(uid, ["update"])
              return user.value
            }))
            return yield* detailsOf(user)
          }),
        unlock: (uid) =>
          Effect.gen(function*() {
            yield* mayManage(uid)
            const user = yield* store.clearFailedSignIns(uid)
            if (Option.isNone(user)) return yield* new NotFound({ what: "user" })
            yield* record("user_unlocked", uid, null)
            return yield* detailsOf(user.value)
          }),
        issueApiToken: (uid, applicationName, options = {}) =>
          Effect.gen(function*() {
            yield* superadminOnly("issue API tokens")
            const lifetime = options.expiresIn ?? settings.apiTokenLifetime
            yield* check("expires_in", Duration.toSeconds(lifetime) >= 60 ? undefined : "must be at least 60 seconds")
            yield* check("token", options.token === undefined || isSecretShaped(options.token) ? undefined : "must be 32 lowercase hex characters")
            const holder = yield* existing(uid)
            // a person signs in (with their second factor); a token made in advance would bypass that
            yield* check("user", holder.isApiUser ? undefined : "must be an API user: API tokens are issued only to API users")
            const application = yield* applicationNamed(applicationName)
            const at = yield* now
            const token = options.token ?? newSecret()
            const id = randomUUID()
            const expiresAt = new Date(at.getTime() + Duration.toMillis(lifetime))
            yield* store.insertAccessToken(
              apiTokenRecord({ id, secret: token, applicationId: application.id, userUid: uid, createdAt: at, expiresAt })
            )
            yield* record("api_token_issued", uid, application.id, { token_id: id, expires_at: expiresAt.toISOString() })
            return { id, token, issuedAt: at, expiresAt }
          }),
        revokeToken: (id) =>
          Effect.gen(function*() {
            yield* superadminOnly("revoke API tokens")
            const token = yield* store.accessTokenById(id)
            if (Option.isNone(token)) return yield* new NotFound({ what: "token" })
            yield* store.revokeTokens({ accessTokenId: id }, yield* now)
            yield* record("token_revoked", token.value.userUid, token.value.applicationId, { token_id: id })
          }),
        mayManage,
        events: ({ limit, ...filter }) => store.events({ ...filter, limit: limit ?? 100 })
      }
    })
  )
}

