import * as Sso from "@civicstack/core-sso"
import { Command, Options } from "@effect/cli"
import { Console, Duration, Effect, Layer, Option } from "effect"
import { json, print, quietLogsOnStderr } from "./output"
import { databaseWithJobsLayer } from "../app"
import { parseServerConfig } from "../config"
import { ssoServiceLayer } from "../services/sso"
import { randomBytes } from "node:crypto"

/**
 * The server's database (DATA_DIR or DATABASE_URL), migrated, with the SSO of the server's slot over it. Pushes go to
 * the job queue.
 */
const ssoOnServerDatabase = Layer.unwrapEffect(
  Effect.map(Effect.suspend(() => parseServerConfig(process.env)), (config) =>
    ssoServiceLayer(config).pipe(Layer.provideMerge(databaseWithJobsLayer(config))))
)

const email = Options.text("email").pipe(Options.withDescription("the user's email address"))
const application = Options.text("application").pipe(Options.withDescription("the application's name"))

/** Runs a command on the server's database; refusals (bad values, unknown users, taken names) exit with code 2. */
const run = <A>(effect: Effect.Effect<A, unknown, Sso.SsoServices>) =>
  effect.pipe(
    Effect.catchIf(
      (error): error is Sso.InvalidInput | Sso.NotFound | Sso.AlreadyTaken =>
        error instanceof Sso.InvalidInput || error instanceof Sso.NotFound || error instanceof Sso.AlreadyTaken,
      (error) =>
        Console.error(error._tag === "AlreadyTaken" ? `That ${error.field} is already taken` : error.message).pipe(
          Effect.zipRight(Effect.sync(() => { process.exitCode = 2 }))
        )
    ),
    Effect.provideService(Sso.Actor, { kind: "cli" }),
    Effect.provide(ssoOnServerDatabase),
    // outermost, so that opening the database logs to stderr too
    Effect.provide(quietLogsOnStderr)
  )

const describeUser = ({ permissions, user }: Sso.UserDetails) => {
  const state = user.suspendedAt !== null
    ? ` suspended (${user.suspensionReason})`
    : user.lockedUntil !== null && user.lockedUntil.getTime() > Date.now()
    ? " locked"
    : ""
  const held = Object.entries(permissions).map(([name, names]) => `${name}: ${names.join(" ")}`).join("; ")
  return `${user.email}  ${user.name}  ${user.uid}${user.isApiUser ? "  (API user)" : ""}${state}${held === "" ? "" : `  [${held}]`}`
}

const userJson = ({ permissions, user }: Sso.UserDetails) => ({
  uid: user.uid,
  email: user.email,
  name: user.name,
  api_user: user.isApiUser,
  permissions,
  suspended_at: user.suspendedAt?.toISOString() ?? null,
  suspension_reason: user.suspensionReason,
  locked_until: user.lockedUntil?.toISOString() ?? null
})

const userByEmail = (address: string) => Effect.flatMap(Sso.Directory, (directory) => directory.userByEmail(address))

const createApp = Command.make("create-app", {
  name: Options.text("name"),
  homeUri: Options.text("home-uri"),
  redirectUris: Options.text("redirect-uri").pipe(Options.repeated, Options.withDescription("repeat for several")),
  permissions: Options.text("permission").pipe(Options.repeated, Options.withDescription("beyond signin; repeat for several")),
  pushUpdates: Options.boolean("push-updates"),
  pushFormat: Options.choice("push-format", ["seed", "gds-sso"]).pipe(Options.withDefault("seed" as const)),
  requirePkce: Options.boolean("require-pkce"),
  requireTwoStep: Options.boolean("require-2sv").pipe(Options.withDescription("its users must use two-step verification")),
  json
}, (options) =>
  run(Effect.gen(function*() {
    const created = yield* (yield* Sso.Directory).createApplication({
      name: options.name,
      homeUri: options.homeUri,
      redirectUris: options.redirectUris,
      permissions: options.permissions,
      pushUpdates: options.pushUpdates,
      pushFormat: options.pushFormat,
      requirePkce: options.requirePkce,
      requireTwoStep: options.requireTwoStep
    })
    yield* print(options.json, { name: created.application.name, client_id: created.clientId, client_secret: created.clientSecret }, [
      `Created ${created.application.name}. Its credentials are shown only now:`,
      `  client_id:     ${created.clientId}`,
      `  client_secret: ${created.clientSecret}`
    ])
  }))).pipe(Command.withDescription("Register an application; prints its client_id and client_secret once"))

const createUser = Command.make("create-user", {
  email,
  name: Options.text("name"),
  admin: Options.boolean("admin").pipe(Options.withDescription("signin and admin on the sign-on itself")),
  apiUser: Options.boolean("api-user").pipe(Options.withDescription("a user for API tokens, who never signs in")),
  json
}, (options) =>
  run(Effect.gen(function*() {
    const password = options.apiUser ? undefined : randomBytes(18).toString("base64url")
    const created = yield* (yield* Sso.Directory).createUser({
      email: options.email,
      name: options.name,
      admin: options.admin,
      apiUser: options.apiUser,
      ...(password === undefined ? {} : { password })
    })
    yield* print(options.json, { user: userJson(created), ...(password === undefined ? {} : { password }) }, [
      describeUser(created),
      ...(password === undefined ? [] : [`Password (shown only now; ask them to keep it safe): ${password}`])
    ])
  }))).pipe(Command.withDescription("Create a user with a new password, printed once (none for an API user)"))

const grant = Command.make("grant", {
  email,
  application,
  permissions: Options.text("permission").pipe(Options.repeated, Options.withDescription("the whole new set; none removes all")),
  json
}, (options) =>
  run(Effect.gen(function*() {
    const user = yield* userByEmail(options.email)
    const changed = yield* (yield* Sso.Directory).setPermissions(user.user.uid, options.application, options.permissions)
    yield* print(options.json, { user: userJson(changed) }, [describeUser(changed)])
  }))).pipe(Command.withDescription("Set a user's permissions on an application (the applications they use are told)"))

const suspend = Command.make("suspend", { email, reason: Options.text("reason"), json }, (options) =>
  run(Effect.gen(function*() {
    const user = yield* userByEmail(options.email)
    const changed = yield* (yield* Sso.Directory).suspend(user.user.uid, options.reason)
    yield* print(options.json, { user: userJson(changed) }, [describeUser(changed)])
  }))).pipe(Command.withDescription("Suspend a user: their tokens are revoked and their applications told to sign them out"))

const simpleUserCommand = (name: string, description: string, change: (uid: string) => Effect.Effect<Sso.UserDetails, unknown, Sso.Directory>) =>
  Command.make(name, { email, json }, (options) =>
    run(Effect.gen(function*() {
      const user = yield* userByEmail(options.email)
      const changed = yield* change(user.user.uid)
      yield* print(options.json, { user: userJson(changed) }, [describeUser(changed)])
    }))).pipe(Command.withDescription(description))

const unsuspend = simpleUserCommand("unsuspend", "Let a suspended user sign in again", (uid) =>
  Effect.flatMap(Sso.Directory, (directory) => directory.unsuspend(uid)))

const unlock = simpleUserCommand("unlock", "End the lock that wrong passwords put on an account", (uid) =>
  Effect.flatMap(Sso.Directory, (directory) => directory.unlock(uid)))

const resetTwoStep = Command.make("reset-2sv", { email, json }, (options) =>
  run(Effect.gen(function*() {
    const user = yield* userByEmail(options.email)
    const removed = yield* (yield* Sso.TwoStepVerification).reset(user.user.uid)
    yield* print(options.json, { email: user.user.email, two_step_removed: removed }, [
      removed
        ? `Two-step verification of ${user.user.email} is removed. They set it up again at their next sign-in if it is required of them.`
        : `${user.user.email} had no two-step verification.`
    ])
  }))).pipe(Command.withDescription("Remove a user's two-step verification, for someone who lost their app and recovery codes"))

const issueToken = Command.make("issue-token", {
  email,
  application,
  expiresIn: Options.integer("expires-in").pipe(Options.optional, Options.withDescription("seconds (default 2 years)")),
  json
}, (options) =>
  run(Effect.gen(function*() {
    const user = yield* userByEmail(options.email)
    const issued = yield* (yield* Sso.Directory).issueApiToken(user.user.uid, options.application, {
      ...Option.match(options.expiresIn, { onNone: () => ({}), onSome: (seconds) => ({ expiresIn: Duration.seconds(seconds) }) })
    })
    yield* print(options.json, { id: issued.id, access_token: issued.token, expires_at: issued.expiresAt.toISOString() }, [
      `API token for ${options.email} on ${options.application}, shown only now:`,
      `  ${issued.token}`,
      `  id ${issued.id}, expires ${issued.expiresAt.toISOString()}`
    ])
  }))).pipe(Command.withDescription("Issue a long-lived API token; printed once"))

const revokeToken = Command.make("revoke-token", { id: Options.text("id"), json }, (options) =>
  run(Effect.gen(function*() {
    yield* (yield* Sso.Directory).revokeToken(options.id)
    yield* print(options.json, { revoked: options.id }, [`Revoked ${options.id}`])
  }))).pipe(Command.withDescription("Revoke a token by its id"))

const listUsers = Command.make("list-users", { json }, (options) =>
  run(Effect.gen(function*() {
    const users = yield* (yield* Sso.Directory).users
    yield* print(options.json, { users: users.map(userJson) }, users.map(describeUser))
  }))).pipe(Command.withDescription("List users with their permissions, suspension and lock"))

const rotateKey = Command.make("rotate-key", { json }, (options) =>
  run(Effect.gen(function*() {
    const kid = yield* (yield* Sso.OAuthServer).rotateSigningKey
    yield* print(options.json, { kid }, [`id_tokens are signed with key ${kid} from now on; the old key stays published until its tokens expire`])
  }))).pipe(Command.withDescription("Sign id_tokens with a new key pair"))

export const ssoCommand = Command.make("sso").pipe(
  Command.withDescription("Sign-on administration on the server's database (DATA_DIR or DATABASE_URL)"),
  Command.withSubcommands([createApp, createUser, grant, suspend, unsuspend, unlock, resetTwoStep, issueToken, revokeToken, listUsers, rotateKey])
)
