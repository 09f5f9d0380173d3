import { Authorization, Directory, layerMemory, MemoryOutbox, SignIn, ssoHandlers, type SsoSettings, workers } from "@civicstack/core-sso"
import { addSsoGroups } from "@civicstack/core-sso/api"
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Effect, Layer, ManagedRuntime, Option } from "effect"
import { createServer } from "node:http"

const api = addSsoGroups(HttpApi.make("sdk-sso-test"))

export const PASSWORD = "a long enough test password"
export const REDIRECT_URI = "http://127.0.0.1:7/auth/callback"

/**
 * The real SSO (core-sso in memory, its HTTP handlers) on 127.0.0.1 at a free port, with the push sender running,
 * allowed to reach loopback addresses.
 */
const ssoServerLayer = (settings: Partial<SsoSettings>) => {
  const service = layerMemory({ allowPrivateAddresses: true, passwordHashConcurrency: 1, ...settings })
  return HttpApiBuilder.serve().pipe(
    Layer.provide(HttpApiBuilder.api(api)),
    Layer.provide(ssoHandlers(api)),
    Layer.provideMerge(Layer.merge(workers.pipe(Layer.provide(service), Layer.provide(MemoryOutbox.layer)), service)),
    Layer.provideMerge(NodeHttpServer.layer(createServer, { host: "127.0.0.1", port: 0 }))
  )
}

export interface RealSso {
  readonly url: string
  readonly run: <A, E>(effect: Effect.Effect<A, E, Directory | Authorization | SignIn>) => Promise<A>
  readonly close: () => Promise<void>
}

export const startRealSso = async (settings: Partial<SsoSettings> = {}): Promise<RealSso> => {
  const runtime = ManagedRuntime.make(ssoServerLayer(settings))
  const url = await runtime.runPromise(HttpServer.addressFormattedWith(Effect.succeed))
  return { url, run: (effect) => runtime.runPromise(effect), close: () => runtime.dispose() }
}

let counter = 0
/** A unique suffix, so that tests sharing one SSO do not collide on names and emails. */
export const unique = (label: string) => `${label}-${process.pid}-${++counter}`

/** The SSO's own application and an admin API user with a token for it. */
export const adminToken = Effect.gen(function*() {
  const directory = yield* Directory
  yield* directory.ensureApplication({ name: "sso", homeUri: "http://127.0.0.1:7", redirectUris: [], permissions: ["admin", "superadmin"] })
  const admin = yield* directory.createUser({ email: `${unique("admin")}@example.com`, name: "Admin", admin: true, apiUser: true })
  const issued = yield* directory.issueApiToken(admin.user.uid, "sso")
  return issued.token
})

export interface ClientApplication {
  readonly name: string
  readonly clientId: string
  readonly clientSecret: string
}

/** An application with an `editor` permission, and a user with `signin` (and `editor` unless told) on it. */
export const applicationAndUser = (options: {
  readonly homeUri?: string
  readonly pushFormat?: "seed" | "gds-sso"
  readonly userPermissions?: ReadonlyArray<string>
} = {}) =>
  Effect.gen(function*() {
    const directory = yield* Directory
    const name = unique("App")
    const created = yield* directory.createApplication({
      name,
      homeUri: options.homeUri ?? "http://127.0.0.1:7",
      redirectUris: [REDIRECT_URI],
      permissions: ["editor"],
      ...(options.pushFormat === undefined ? {} : { pushUpdates: true, pushFormat: options.pushFormat })
    })
    const email = `${unique("user")}@example.com`
    const user = yield* directory.createUser({ email, name: "Grace Hopper", password: PASSWORD })
    yield* directory.setPermissions(user.user.uid, name, options.userPermissions ?? ["signin", "editor"])
    const application: ClientApplication = { name, clientId: created.clientId, clientSecret: created.clientSecret }
    return { application, uid: user.user.uid, email }
  })

/** An API user holding `permissions` on the application, and a token of theirs for it. */
export const apiTokenFor = (applicationName: string, permissions: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const directory = yield* Directory
    const user = yield* directory.createUser({ email: `${unique("bot")}@example.com`, name: "Bot", apiUser: true })
    yield* directory.setPermissions(user.user.uid, applicationName, permissions)
    const issued = yield* directory.issueApiToken(user.user.uid, applicationName)
    return { token: issued.token, tokenId: issued.id, uid: user.user.uid }
  })

/**
 * What the browser does between the authorization URL and the callback: the user signs in and the SSO answers the
 * authorization request with a redirect, whose location is returned.
 */
export const authorizeAs = (email: string, authorizationUrl: string) =>
  Effect.gen(function*() {
    const session = yield* (yield* SignIn).signIn({ email, password: PASSWORD, address: "192.0.2.10" })
    const query = Object.fromEntries(new URL(authorizationUrl).searchParams)
    const outcome = yield* (yield* Authorization).authorize(query, Option.some({ user: session.user, authTime: new Date() }))
    if (outcome._tag !== "Redirect") return yield* Effect.dieMessage(`expected a redirect, got ${outcome._tag}`)
    return outcome.location
  })
