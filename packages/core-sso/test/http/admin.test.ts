import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Directory } from "../../src/services/Directory"
import { startSsoHost } from "./server"
import type { SsoHost } from "./server"
import { ADMIN_TOKEN, EDITOR_TOKEN, HELPER_TOKEN, PUBLISHER_TOKEN, adminBootstrap } from "../fixtures/adminBootstrap"


let server: SsoHost

beforeAll(async () => {
  server = await startSsoHost({ bootstrap: adminBootstrap })
})
afterAll(() => server?.close())

/** How many users the store holds. */
const userCount = () => server.run(Effect.flatMap(Directory, (directory) => Effect.map(directory.users, (users) => users.length)))

const admin = (method: string, path: string, body?: unknown, token = ADMIN_TOKEN) =>
  fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })

// Bodies are checked field by field; `any` keeps those assertions readable.
const json = (response: Response): Promise<any> => response.json()

const userJson = (token: string) => fetch(`${server.url}/user.json`, { headers: { authorization: `Bearer ${token}` } })

describe("the admin API", () => {
  it("lets an admin who is not a superadmin manage users, and refuses them applications with 403, changing nothing", async () => {
    const created = await admin("POST", "/admin/users", { email: "helped@example.com", name: "Helped" }, HELPER_TOKEN)
    expect(created.status).toBe(201)
    const refused = await admin("POST", "/admin/applications", { name: "Rogue", home_uri: "https://rogue.example", redirect_uris: [] }, HELPER_TOKEN)
    expect(refused.status).toBe(403)
    expect(await json(refused)).toEqual({ error: "Only a superadmin can manage applications" })
    const listed = await json(await admin("GET", "/admin/applications"))
    expect(listed.applications.map((application: any) => application.name)).not.toContain("Rogue")
  })

  it("is for admins only: 401 without a token of the sign-on, 403 for other users", async () => {
    for (const authorization of [undefined, "Bearer 00000000000000000000000000000000", `Bearer ${PUBLISHER_TOKEN}`, `Basic ${ADMIN_TOKEN}`]) {
      const response = await fetch(`${server.url}/admin/users`, { headers: authorization === undefined ? {} : { authorization } })
      expect(response.status, authorization).toBe(401)
      expect(response.headers.get("www-authenticate")).toMatch(/^Bearer /)
      expect(typeof (await json(response)).error).toBe("string")
    }
    const editor = await admin("GET", "/admin/users", undefined, EDITOR_TOKEN)
    expect(editor.status).toBe(403)
    expect(editor.headers.get("cache-control")).toBe("no-store")
    expect(await json(editor)).toEqual({ error: "This token's user is not an administrator of the sign-on" })
    const before = await userCount()
    const refused = await admin("POST", "/admin/users", { email: "x@example.com", name: "X" }, EDITOR_TOKEN)
    expect(refused.status).toBe(403)
    expect(await userCount()).toBe(before)
  })

  it("creates an application and shows its credentials once", async () => {
    const created = await admin("POST", "/admin/applications", {
      name: "Alerts admin",
      home_uri: "https://alerts.example",
      redirect_uris: ["https://alerts.example/auth/callback"],
      push_updates: true,
      push_format: "gds-sso",
      require_2sv: true
    })
    expect(created.status).toBe(201)
    expect(created.headers.get("cache-control")).toBe("no-store")
    const { application } = await json(created)
    expect(application.client_id).toMatch(/^[0-9a-f]{32}$/)
    expect(application.client_secret).toMatch(/^[0-9a-f]{32}$/)
    expect(application.permissions).toEqual(["signin", "user_update_permission"])
    const listed = await json(await admin("GET", "/admin/applications"))
    const found = listed.applications.find((entry: any) => entry.name === "Alerts admin")
    expect(found).toMatchObject({ push_format: "gds-sso", push_updates: true, require_2sv: true, require_pkce: false })
    expect(found).not.toHaveProperty("client_secret")
    expect(found).not.toHaveProperty("client_id")
  })

  it("refuses bad input with a 400 naming the field, and a taken email with 409, changing nothing", async () => {
    const before = await userCount()
    const cases: Array<[unknown, number, string]> = [
      [{ email: "not an email", name: "X" }, 400, "email"],
      [{ email: "x@example.com", name: "" }, 400, "name"],
      [{ email: "x@example.com", name: "X", password: "short" }, 400, "password"],
      [{ email: "x@example.com" }, 400, "name"],
      [{ email: "EDITOR@example.com", name: "Dup" }, 409, "email"]
    ]
    for (const [body, status, field] of cases) {
      const response = await admin("POST", "/admin/users", body)
      expect(response.status, JSON.stringify(body)).toBe(status)
      expect((await json(response)).error).toContain(field)
    }
    const malformed = await fetch(`${server.url}/admin/users`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      body: "{"
    })
    expect(malformed.status).toBe(400)
    expect(await userCount()).toBe(before)
  })

  it("manages a user: create, change, permissions, token, suspend, unsuspend, unlock, events", async () => {
    const created = await admin("POST", "/admin/users", { email: "grace@example.com", name: "Grace", api_user: true })
    expect(created.status).toBe(201)
    const { user } = await json(created)
    expect(user).toMatchObject({ email: "grace@example.com", api_user: true, permissions: {}, suspended_at: null })

    const renamed = await json(await admin("PATCH", `/admin/users/${user.uid}`, { name: "Grace Hopper" }))
    expect(renamed.user.name).toBe("Grace Hopper")
    const granted = await json(await admin("PUT", `/admin/users/${user.uid}/permissions`, { application: "Publisher", permissions: ["signin", "editor"] }))
    expect(granted.user.permissions).toEqual({ Publisher: ["editor", "signin"] })
    const unknownPermission = await admin("PUT", `/admin/users/${user.uid}/permissions`, { application: "Publisher", permissions: ["owner"] })
    expect(unknownPermission.status).toBe(400)

    const issued = await admin("POST", `/admin/users/${user.uid}/tokens`, { application: "Publisher", expires_in: 3600 })
    expect(issued.status).toBe(201)
    const token = await json(issued)
    expect(token).toMatchObject({ expires_in: 3600 })
    expect((await userJson(token.access_token)).status).toBe(200)

    const suspended = await json(await admin("POST", `/admin/users/${user.uid}/suspend`, { reason: "Left" }))
    expect(suspended.user.suspension_reason).toBe("Left")
    expect((await userJson(token.access_token)).status).toBe(401)
    const back = await json(await admin("POST", `/admin/users/${user.uid}/unsuspend`))
    expect(back.user.suspended_at).toBeNull()
    // suspension revoked the token for good
    expect((await userJson(token.access_token)).status).toBe(401)

    const second = await json(await admin("POST", `/admin/users/${user.uid}/tokens`, { application: "Publisher" }))
    expect(second.expires_in).toBe(2 * 365 * 24 * 3600)
    expect((await userJson(second.access_token)).status).toBe(200)
    expect((await admin("DELETE", `/admin/tokens/${second.id}`)).status).toBe(204)
    expect((await userJson(second.access_token)).status).toBe(401)
    expect((await admin("DELETE", `/admin/tokens/${second.id}x`)).status).toBe(404)

    expect((await admin("POST", `/admin/users/${user.uid}/unlock`)).status).toBe(200)
    const { events } = await json(await admin("GET", `/admin/events?user=${user.uid}`))
    expect(events.map((event: any) => event.kind)).toEqual([
      "user_unlocked",
      "token_revoked",
      "api_token_issued",
      "user_unsuspended",
      "user_suspended",
      "api_token_issued",
      "permissions_changed",
      "user_updated",
      "user_created"
    ])
    expect(events.find((event: any) => event.kind === "permissions_changed").application).toBe("Publisher")
    const root = (await json(await admin("GET", "/admin/users"))).users.find((each: any) => each.email === "root@example.com")
    // every change names the administrator who made it
    for (const event of events) {
      expect(event.detail.actor).toEqual({ kind: "administrator", uid: root.uid, email: "root@example.com" })
    }
    expect((await admin("GET", "/admin/users/no-such-user")).status).toBe(404)
  })
})
