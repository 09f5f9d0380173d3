import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { Effect, Exit } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  AdminConflict,
  AdminForbidden,
  AdminNotFound,
  AdminUnauthorized,
  createSsoAdminClient,
  makeSsoAdminClient,
  SsoClientError,
  type SsoAdminPromiseClient
} from "../src"
import { adminToken, apiTokenFor, type RealSso, startRealSso, unique } from "./support/realSso"

let sso: RealSso
let client: SsoAdminPromiseClient
let token: string

beforeAll(async () => {
  sso = await startRealSso()
  token = await sso.run(adminToken)
  client = createSsoAdminClient({ baseUrl: sso.url, token })
})
afterAll(async () => {
  await client?.close()
  await sso?.close()
})

describe("the admin client with Promises, against a real SSO", () => {
  it("creates a user and reads it back", async () => {
    const email = `${unique("ada")}@example.com`
    const created = await client.createUser({ email, name: "Ada Lovelace", organisation_slug: "analytical-engines" })
    expect(created).toMatchObject({ email, name: "Ada Lovelace", organisation_slug: "analytical-engines", api_user: false })
    const read = await client.getUser(created.uid)
    expect(read).toEqual(created)
    expect((await client.listUsers()).map((user) => user.uid)).toContain(created.uid)
  })

  it("creates an application, grants a permission and issues a token", async () => {
    const name = unique("Publisher")
    const application = await client.createApplication({
      name,
      home_uri: "https://publisher.example",
      redirect_uris: ["https://publisher.example/auth/callback"],
      permissions: ["editor"]
    })
    expect(application.client_id).toMatch(/^[0-9a-f]{32}$/)
    expect(application.client_secret).toMatch(/^[0-9a-f]{32}$/)
    const user = await client.createUser({ email: `${unique("bot")}@example.com`, name: "Bot", api_user: true })
    const granted = await client.setPermissions(user.uid, { application: name, permissions: ["signin", "editor"] })
    expect(granted.permissions[name]).toEqual(["editor", "signin"])
    const issued = await client.issueToken(user.uid, { application: name, expires_in: 3600 })
    expect(issued).toMatchObject({ access_token: expect.stringMatching(/^[0-9a-f]{32}$/), expires_in: 3600 })
    await client.revokeToken(issued.id)
  })

  it("rejects with the API's error classes", async () => {
    await expect(client.getUser("00000000-0000-4000-8000-000000000000")).rejects.toBeInstanceOf(AdminNotFound)
    const email = `${unique("twice")}@example.com`
    await client.createUser({ email, name: "Once" })
    await expect(client.createUser({ email, name: "Twice" })).rejects.toBeInstanceOf(AdminConflict)

    const stranger = createSsoAdminClient({ baseUrl: sso.url, token: "0".repeat(32) })
    await expect(stranger.listUsers()).rejects.toBeInstanceOf(AdminUnauthorized)
    await stranger.close()

    const notAdmin = await sso.run(apiTokenFor("sso", ["signin"]))
    const refused = createSsoAdminClient({ baseUrl: sso.url, token: notAdmin.token })
    await expect(refused.listUsers()).rejects.toBeInstanceOf(AdminForbidden)
    await refused.close()
  })

  it("an SSO that cannot be reached is an SsoClientError", async () => {
    const nowhere = createSsoAdminClient({ baseUrl: "http://127.0.0.1:9", token })
    await expect(nowhere.listUsers()).rejects.toMatchObject({ _tag: "SsoClientError", reason: "Transport" })
    await expect(nowhere.listUsers()).rejects.toBeInstanceOf(SsoClientError)
    await nowhere.close()
  })
})

describe("the admin client with Effect", () => {
  it("creates a user and reads it back; a refusal is a typed failure", async () => {
    const program = Effect.gen(function*() {
      const admin = yield* makeSsoAdminClient({ baseUrl: sso.url, token })
      const created = yield* admin.createUser({ email: `${unique("effect")}@example.com`, name: "Effect User" })
      const read = yield* admin.getUser(created.uid)
      const missing = yield* Effect.exit(admin.getUser("00000000-0000-4000-8000-000000000001"))
      return { created, read, missing }
    }).pipe(Effect.provide(FetchHttpClient.layer))
    const { created, missing, read } = await Effect.runPromise(program)
    expect(read).toEqual(created)
    expect(Exit.isFailure(missing)).toBe(true)
    if (Exit.isFailure(missing)) expect(missing.cause).toMatchObject({ _tag: "Fail", error: { _tag: "AdminNotFound" } })
  })
})
