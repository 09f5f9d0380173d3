import { Duration, Effect, Option, Schema } from "effect"
import { randomBytes } from "node:crypto"
import {
  ADMIN,
  normalisePermissions,
  SERVICE_APPLICATIONS,
  SERVICE_PERMISSIONS,
  SIGNIN,
  SSO_APPLICATION,
  SUPERADMIN
} from "../domain/permissions"
import { hashSecret } from "../domain/secrets"
import { isTotpSecret } from "../domain/twoStep"
import { Actor } from "./Actor"
import { Directory } from "./Directory"
import type { UserDetails } from "./Directory"
import { SsoParts } from "./SsoParts"
import { TwoStepVerification } from "./TwoStep"

const Names = Schema.Array(Schema.String)

/** A `CIVICSTACK_BOOTSTRAP` file: applications, users and API tokens to ensure at each start. */
export const BootstrapDocument = Schema.Struct({
  applications: Schema.optionalWith(
    Schema.Array(Schema.Struct({
      name: Schema.String,
      description: Schema.optional(Schema.String),
      home_uri: Schema.String,
      redirect_uris: Schema.optionalWith(Names, { default: () => [] }),
      client_id: Schema.optional(Schema.String),
      client_secret: Schema.optional(Schema.String),
      permissions: Schema.optional(Names),
      push_updates: Schema.optional(Schema.Boolean),
      push_format: Schema.optional(Schema.Literal("seed", "gds-sso")),
      require_pkce: Schema.optional(Schema.Boolean),
      require_2sv: Schema.optional(Schema.Boolean)
    })),
    { default: () => [] }
  ),
  users: Schema.optionalWith(
    Schema.Array(Schema.Struct({
      email: Schema.String,
      name: Schema.String,
      password: Schema.optional(Schema.String),
      /** A TOTP secret given to the user, confirmed: automated environments sign in with its codes. */
      otp_secret: Schema.optional(Schema.String.pipe(Schema.filter((secret) =>
        isTotpSecret(secret) || "must be base32 (A to Z and 2 to 7), at least 16 characters"
      ))),
      /** `true`: the user is a superadmin of the sign-on (as `role: "superadmin"`). */
      admin: Schema.optional(Schema.Boolean),
      role: Schema.optional(Schema.Literal("admin", "superadmin")),
      api_user: Schema.optional(Schema.Boolean),
      organisation_slug: Schema.optional(Schema.NullOr(Schema.String)),
      organisation_content_id: Schema.optional(Schema.NullOr(Schema.String)),
      permissions: Schema.optional(Schema.Record({ key: Schema.String, value: Names }))
    })),
    { default: () => [] }
  ),
  api_tokens: Schema.optionalWith(
    Schema.Array(Schema.Struct({
      user: Schema.String,
      application: Schema.String,
      token: Schema.optional(Schema.String),
      expires_in: Schema.optional(Schema.Number.pipe(Schema.int(), Schema.positive()))
    })),
    { default: () => [] }
  )
})
export type BootstrapDocument = typeof BootstrapDocument.Type

/** A secret made while setting up, shown once to whoever started the server. */
export interface NewSecret {
  readonly what: string
  readonly value: string
}

export { SERVICE_APPLICATIONS }

const ssoApplication = (issuer: string) => ({
  name: SSO_APPLICATION,
  description: "The single sign-on itself: its roles, admin and superadmin",
  homeUri: issuer,
  redirectUris: [],
  permissions: [ADMIN, SUPERADMIN]
})

const serviceApplication = (name: (typeof SERVICE_APPLICATIONS)[number], issuer: string) => ({
  name,
  homeUri: issuer,
  redirectUris: [],
  permissions: SERVICE_PERMISSIONS[name]
})

/** An admin's first password: 24 characters from 144 random bits. */
const newPassword = () => randomBytes(18).toString("base64url")

/**
 * First start: on a store without applications, the SSO's own application, the applications of the other services,
 * an admin user with an admin API token, and an API user with a token for each service. Nothing when any
 * application exists.
 */
export const firstStart = Effect.gen(function*() {
  const { settings, store } = yield* SsoParts
  const directory = yield* Directory
  return yield* store.exclusively(Effect.gen(function*() {
    if ((yield* store.listApplications).length > 0) return Option.none<ReadonlyArray<NewSecret>>()
    yield* directory.createApplication(ssoApplication(settings.issuer))
    for (const name of SERVICE_APPLICATIONS) {
      yield* directory.createApplication(serviceApplication(name, settings.issuer))
    }
    const password = newPassword()
    yield* directory.createUser({ email: "admin@civicstack.local", name: "Administrator", password, admin: true })
    // the admin API's token belongs to the API user: API tokens are for API users only
    const apiUser = yield* directory.createUser({ email: "api@civicstack.local", name: "Services", apiUser: true, admin: true })
    const adminToken = yield* directory.issueApiToken(apiUser.user.uid, SSO_APPLICATION)
    const secrets: Array<NewSecret> = [
      { what: "password of admin@civicstack.local", value: password },
      { what: "admin API token of api@civicstack.local", value: adminToken.token }
    ]
    for (const name of SERVICE_APPLICATIONS) {
      yield* directory.setPermissions(apiUser.user.uid, name, [SIGNIN])
      const issued = yield* directory.issueApiToken(apiUser.user.uid, name)
      secrets.push({ what: `API token of api@civicstack.local for ${name}`, value: issued.token })
    }
    return Option.some<ReadonlyArray<NewSecret>>(secrets)
  }))
}).pipe(Effect.provideService(Actor, { kind: "bootstrap" }))

const samePermissions = (a: ReadonlyArray<string> | undefined, b: ReadonlyArray<string>) =>
  JSON.stringify(normalisePermissions(a ?? [])) === JSON.stringify(normalisePermissions(b))

/**
 * Ensures what a bootstrap file lists, changing only what differs, so that applying it again changes nothing.
 * Credentials, passwords and tokens it does not give are made when their record is created, and returned.
 */
export const applyBootstrap = (document: BootstrapDocument) =>
  Effect.gen(function*() {
    const { passwords, settings, store } = yield* SsoParts
    const directory = yield* Directory
    const twoStep = yield* TwoStepVerification
    return yield* store.exclusively(Effect.gen(function*() {
      const secrets: Array<NewSecret> = []
      yield* directory.ensureApplication(ssoApplication(settings.issuer))
      // the other services' applications always exist, so that a file can grant their permissions without listing them
      const listed = new Set(document.applications.map((application) => application.name))
      for (const name of SERVICE_APPLICATIONS.filter((name) => !listed.has(name))) {
        yield* directory.ensureApplication(serviceApplication(name, settings.issuer))
      }
      for (const application of document.applications) {
        const { created } = yield* directory.ensureApplication({
          name: application.name,
          homeUri: application.home_uri,
          redirectUris: application.redirect_uris,
          ...(application.description === undefined ? {} : { description: application.description }),
          ...(application.permissions === undefined ? {} : { permissions: application.permissions }),
          ...(application.push_updates === undefined ? {} : { pushUpdates: application.push_updates }),
          ...(application.push_format === undefined ? {} : { pushFormat: application.push_format }),
          ...(application.require_pkce === undefined ? {} : { requirePkce: application.require_pkce }),
          ...(application.require_2sv === undefined ? {} : { requireTwoStep: application.require_2sv }),
          ...(application.client_id === undefined ? {} : { clientId: application.client_id }),
          ...(application.client_secret === undefined ? {} : { clientSecret: application.client_secret })
        })
        if (Option.isSome(created) && application.client_id === undefined) {
          secrets.push({ what: `client_id of ${application.name}`, value: created.value.clientId })
        }
        if (Option.isSome(created) && application.client_secret === undefined) {
          secrets.push({ what: `client_secret of ${application.name}`, value: created.value.clientSecret })
        }
      }
      for (const entry of document.users) {
        const existing = yield* directory.userByEmail(entry.email).pipe(
          Effect.map(Option.some),
          Effect.catchTag("NotFound", () => Effect.succeed(Option.none()))
        )
        let details: UserDetails
        if (Option.isNone(existing)) {
          details = yield* directory.createUser({
            email: entry.email,
            name: entry.name,
            ...(entry.password === undefined ? {} : { password: entry.password }),
            ...(entry.api_user === undefined ? {} : { apiUser: entry.api_user }),
            ...(entry.organisation_slug === undefined ? {} : { organisationSlug: entry.organisation_slug }),
            ...(entry.organisation_content_id === undefined ? {} : { organisationContentId: entry.organisation_content_id })
          })
        } else {
          details = existing.value
          const { user } = details
          const changes = {
            ...(entry.name === user.name ? {} : { name: entry.name }),
            ...(entry.organisation_slug === undefined || entry.organisation_slug === user.organisationSlug
              ? {}
              : { organisationSlug: entry.organisation_slug }),
            ...(entry.organisation_content_id === undefined || entry.organisation_content_id === user.organisationContentId
              ? {}
              : { organisationContentId: entry.organisation_content_id })
          }
          if (Object.keys(changes).length > 0) details = yield* directory.updateUser(user.uid, changes)
          if (entry.password !== undefined && !(yield* passwords.verifyOrDummy(user.passwordHash, entry.password))) {
            yield* directory.setPassword(user.uid, entry.password)
          }
        }
        if (entry.otp_secret !== undefined) yield* twoStep.give(details.user.uid, entry.otp_secret)
        const wanted: Record<string, ReadonlyArray<string>> = { ...entry.permissions }
        const role = entry.role ?? (entry.admin === true ? "superadmin" : undefined)
        if (role !== undefined) {
          const roles = role === "superadmin" ? [ADMIN, SUPERADMIN] : [ADMIN]
          wanted[SSO_APPLICATION] = normalisePermissions([...(wanted[SSO_APPLICATION] ?? []), SIGNIN, ...roles])
        }
        for (const [application, permissions] of Object.entries(wanted)) {
          if (!samePermissions(details.permissions[application], permissions)) {
            details = yield* directory.setPermissions(details.user.uid, application, permissions)
          }
        }
      }
      for (const entry of document.api_tokens) {
        const user = yield* directory.userByEmail(entry.user)
        const application = yield* directory.application(entry.application)
        const expiresIn = entry.expires_in === undefined ? {} : { expiresIn: Duration.seconds(entry.expires_in) }
        if (entry.token !== undefined) {
          if (Option.isNone(yield* store.accessTokenByHash(hashSecret(entry.token)))) {
            yield* directory.issueApiToken(user.user.uid, application.name, { ...expiresIn, token: entry.token })
          }
          continue
        }
        const held = yield* store.apiTokensOf(user.user.uid)
        if (!held.some((token) => token.applicationId === application.id && token.revokedAt === null)) {
          const issued = yield* directory.issueApiToken(user.user.uid, application.name, expiresIn)
          secrets.push({ what: `API token of ${entry.user} for ${entry.application}`, value: issued.token })
        }
      }
      return secrets as ReadonlyArray<NewSecret>
    }))
  }).pipe(Effect.provideService(Actor, { kind: "bootstrap" }))
