import { Effect } from "effect"
import fc from "fast-check"
import * as Fs from "node:fs/promises"
import * as Http from "node:http"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { formToken, makeBrowser } from "../../../packages/core-sso/test/fixtures/browser"
import { startPushReceiver } from "../../../packages/core-sso/test/fixtures/pushReceiver"
import { createTestDatabase } from "@civicstack/kit/testing"
import { startTcpProxy } from "@civicstack/kit/testing"
import { startCli, stop, waitUntilReady } from "./serverProcess"
import type { ServerProcess } from "./serverProcess"
import { writeBootstrap } from "./sso/bootstrap"

/**
 * The single sign-on as operators meet it: real server processes killed while pushes wait, two copies sharing
 * brute-force counters and a database outage on PostgreSQL, and requests no client should send.
 */

const ADMIN_TOKEN = "e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0"
const CLIENT_ID = "5555555555555555eeeeeeeeeeeeeeee"
const CLIENT_SECRET = "6666666666666666ffffffffffffffff"
const ADA_TOKEN = "7777777777777777aaaaaaaaaaaaaaaa"

let scratch: string
let receiver: Awaited<ReturnType<typeof startPushReceiver>>
let bootstrap: Awaited<ReturnType<typeof writeBootstrap>>

beforeAll(async () => {
  scratch = await Fs.mkdtemp(Path.join(Os.tmpdir(), "civicstack-sso-system-"))
  receiver = await startPushReceiver()
  bootstrap = await writeBootstrap({
    applications: [{
      name: "Publisher",
      home_uri: `${receiver.url}/publisher`,
      redirect_uris: ["https://publisher.example/cb"],
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      permissions: ["signin", "editor", "writer"],
      push_updates: true
    }],
    users: [
      { email: "root@example.com", name: "Root", admin: true, api_user: true },
      // an API user: Publisher's pushes about her are what is watched
      { email: "ada@example.com", name: "Ada", api_user: true, permissions: { Publisher: ["signin"] } },
      { email: "grace@example.com", name: "Grace", password: "a long enough password", permissions: { Publisher: ["signin"] } }
    ],
    api_tokens: [
      { user: "root@example.com", application: "sso", token: ADMIN_TOKEN },
      // a token issued to Ada makes Publisher an application she uses: it receives her changes
      { user: "ada@example.com", application: "Publisher", token: ADA_TOKEN }
    ]
  })
})
afterAll(async () => {
  await receiver?.close()
  await bootstrap?.remove()
  await Fs.rm(scratch, { recursive: true, force: true })
})

/** A server of the SSO alone; with the bootstrap file unless told otherwise (it resets what it lists at each start). */
const serve = async (env: Record<string, string>, { bootstrapped = true } = {}) => {
  const server = await startCli(["serve"], {
    SERVICES: "sso",
    SSO_ALLOW_PRIVATE_ADDRESSES: "true",
    SHUTDOWN_GRACE_SECONDS: "10",
    ...(bootstrapped ? { CIVICSTACK_BOOTSTRAP: bootstrap.file } : {}),
    ...env
  })
  await waitUntilReady(server, 60_000)
  return server
}

const admin = (server: ServerProcess, method: string, path: string, body?: unknown) =>
  fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })

const adaUid = async (server: ServerProcess) => {
  const { users } = await (await admin(server, "GET", "/admin/users")).json() as { users: Array<{ uid: string; email: string }> }
  return users.find((user) => user.email === "ada@example.com")!.uid
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const until = async (done: () => boolean, timeoutMs: number, what: string) => {
  const deadline = Date.now() + timeoutMs
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await pause(100)
  }
}

const tokenRequest = (server: ServerProcess, fields: Record<string, string>, address?: string) =>
  fetch(`${server.url}/token`, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      ...(address === undefined ? {} : { "x-forwarded-for": address })
    },
    body: new URLSearchParams(fields).toString()
  })

/** A token request sent from `localAddress` (any 127.x.y.z reaches a server on 127.0.0.1): status and body. */
const tokenRequestFrom = (server: ServerProcess, fields: Record<string, string>, localAddress: string) =>
  new Promise<{ status: number; retryAfter: string | undefined; body: string }>((resolve, reject) => {
    const body = new URLSearchParams(fields).toString()
    const request = Http.request(`${server.url}/token`, {
      method: "POST",
      localAddress,
      headers: { "content-type": "application/x-www-form-urlencoded", "content-length": Buffer.byteLength(body) }
    }, (response) => {
      let text = ""
      response.on("data", (chunk: Buffer) => { text += chunk.toString() })
      response.on("end", () => resolve({ status: response.statusCode!, retryAfter: response.headers["retry-after"], body: text }))
    })
    request.on("error", reject)
    request.end(body)
  })

/** Signs in on the sign-in page as a browser behind `forwardedFor`: the answer's status and the page's problem. */
const signInAnswer = async (server: ServerProcess, password: string, forwardedFor: string) => {
  const browser = makeBrowser(server.url, { "x-forwarded-for": forwardedFor })
  const page = await (await browser.get("/users/sign_in")).text()
  const answer = await browser.postForm("/users/sign_in", { authenticity_token: formToken(page), email: "grace@example.com", password })
  const html = await answer.text()
  return { status: answer.status, problem: /<div class="problem"[\s\S]*?<\/div>/.exec(html)?.[0] }
}

describe("the single sign-on against strangers, behind one trusted proxy", () => {
  let server: ServerProcess
  beforeAll(async () => {
    server = await serve({ DATA_DIR: Path.join(scratch, "strangers"), TRUST_PROXY: "1" })
  }, 90_000)
  afterAll(() => server === undefined ? undefined : stop(server))

  const wrongSecret = { grant_type: "refresh_token", refresh_token: "x", client_id: CLIENT_ID, client_secret: "0".repeat(32) }
  const rightSecret = { ...wrongSecret, client_secret: CLIENT_SECRET }

  it("bad client secrets from 127.0.0.2 make 127.0.0.2 wait, while the client's own server still gets its answers", async () => {
    for (let attempt = 0; attempt < 10; attempt++) {
      expect((await tokenRequestFrom(server, wrongSecret, "127.0.0.2")).status).toBe(401)
    }
    const stranger = await tokenRequestFrom(server, rightSecret, "127.0.0.2")
    expect(stranger.status).toBe(429)
    expect(Number(stranger.retryAfter)).toBeGreaterThan(500)
    const owner = await tokenRequestFrom(server, rightSecret, "127.0.0.1")
    expect(owner.status).toBe(400)
    expect(JSON.parse(owner.body)).toMatchObject({ error: "invalid_grant" })
  })

  it("a client that writes its own X-Forwarded-For entries is still counted at the address the proxy saw", async () => {
    for (let attempt = 0; attempt < 10; attempt++) {
      const response = await tokenRequest(server, wrongSecret, `10.9.8.${attempt}, 203.0.113.50`)
      expect(response.status).toBe(401)
    }
    const spoofed = await tokenRequest(server, rightSecret, "10.9.8.200, 203.0.113.50")
    expect(spoofed.status).toBe(429)
    expect((await tokenRequest(server, rightSecret, "203.0.113.51")).status).toBe(400)
  })

  it("while an account is locked, its right password gets the same answer as a wrong one; a stranger's lock ends in an hour at most", async () => {
    for (let attempt = 0; attempt < 6; attempt++) {
      expect((await signInAnswer(server, `wrong password ${attempt}`, `198.51.100.${attempt}`)).status).toBe(401)
    }
    const right = await signInAnswer(server, "a long enough password", "198.51.100.20")
    const wrong = await signInAnswer(server, "another wrong password", "198.51.100.21")
    expect(right).toEqual(wrong)
    expect(right.status).toBe(401)
    const { users } = await (await admin(server, "GET", "/admin/users")).json() as {
      users: Array<{ uid: string; email: string; locked_until: string | null }>
    }
    const grace = users.find((user) => user.email === "grace@example.com") as { uid: string; locked_until: string }
    const lockedUntil = grace.locked_until
    expect(Date.parse(lockedUntil) - Date.now()).toBeLessThanOrEqual(3600_000)
    expect((await admin(server, "POST", `/admin/users/${grace.uid}/unlock`)).status).toBe(200)
  })

  it("5 wrong passwords for one account from one address make that address wait, not the account's owner", async () => {
    for (let attempt = 0; attempt < 5; attempt++) {
      expect((await signInAnswer(server, `wrong password ${attempt}`, "198.51.100.77")).status).toBe(401)
    }
    expect((await signInAnswer(server, "a long enough password", "198.51.100.77")).status).toBe(429)
    expect((await signInAnswer(server, "a long enough password", "192.0.2.10")).status).toBe(303)
  })
})

describe("the single sign-on on the embedded database, as operators meet it", () => {
  it("after kill -9 with pushes queued, the restarted server delivers them with the latest state", { timeout: 180_000 }, async () => {
    const dataDir = Path.join(scratch, "kill")
    const webOnly = await serve({ DATA_DIR: dataDir, RUN: "web" })
    const uid = await adaUid(webOnly)
    for (const permissions of [["signin", "editor"], ["signin", "writer"], ["signin", "editor", "writer"]]) {
      const changed = await admin(webOnly, "PUT", `/admin/users/${uid}/permissions`, { application: "Publisher", permissions })
      expect(changed.status).toBe(200)
    }
    expect((await admin(webOnly, "PATCH", `/admin/users/${uid}`, { name: "Ada King" })).status).toBe(200)
    const ready = await (await fetch(`${webOnly.url}/healthcheck/ready`)).json() as { services: { sso: unknown } }
    expect(ready.services.sso).toEqual({
      waiting_pushes: 1,
      sending_pushes: 0,
      failed_pushes: 0,
      oldest_due_push_age_seconds: expect.any(Number)
    })
    webOnly.child.kill("SIGKILL")
    await webOnly.exited
    expect(receiver.received).toHaveLength(0)

    const restarted = await serve({ DATA_DIR: dataDir }, { bootstrapped: false })
    try {
      const path = `/publisher/users/${uid}`
      await until(() => receiver.received.some((push) => push.path === path), 30_000, "the push")
      await pause(1000)
      const pushes = receiver.received.filter((push) => push.path === path)
      // the queued changes were one push, which carried the state at the time it was sent
      expect(pushes).toHaveLength(1)
      expect(pushes[0]!.body).toMatchObject({
        user: { uid, name: "Ada King", permissions: { Publisher: ["editor", "signin", "writer"] } }
      })
      expect(pushes[0]!.authorization).toMatch(/^Bearer [0-9a-f]{32}$/)
      const pushUser = await fetch(`${restarted.url}/user.json`, { headers: { authorization: pushes[0]!.authorization! } })
      expect(((await pushUser.json()) as { user: { permissions: Array<string> } }).user.permissions).toContain("user_update_permission")
    } finally {
      await stop(restarted)
    }
  })

  it("SIGTERM while a push is on its way: the push finishes, the server exits 0, the push is logged once as delivered", { timeout: 180_000 }, async () => {
    const dataDir = Path.join(scratch, "sigterm")
    const server = await serve({ DATA_DIR: dataDir })
    const uid = await adaUid(server)
    const path = `/publisher/users/${uid}`
    const pushesTo = () => receiver.received.filter((push) => push.path === path)
    await pause(1500) // the pushes of the bootstrap's changes go out first
    const before = pushesTo().length
    receiver.answerAfter(3000)
    try {
      const changed = await admin(server, "PUT", `/admin/users/${uid}/permissions`, { application: "Publisher", permissions: ["signin", "writer"] })
      expect(changed.status).toBe(200)
      await until(() => pushesTo().length > before, 30_000, "the push to arrive")
      expect(await stop(server)).toBe(0)
    } finally {
      receiver.answerAfter(0)
    }
    const restarted = await serve({ DATA_DIR: dataDir }, { bootstrapped: false })
    try {
      await pause(1500)
      expect(pushesTo().length).toBe(before + 1)
      const { events } = await (await admin(restarted, "GET", `/admin/events?user=${uid}`)).json() as {
        events: Array<{ kind: string; detail: { outcome?: string; attempt?: number } }>
      }
      const latest = events.find((event) => event.kind === "push")
      expect(latest?.detail).toMatchObject({ outcome: "delivered", attempt: 1 })
    } finally {
      await stop(restarted)
    }
  })

  it("answers hostile input on every endpoint with a 4xx, never a 5xx, and changes nothing", { timeout: 180_000 }, async () => {
    const server = await serve({ DATA_DIR: Path.join(scratch, "hostile"), RUN: "web" })
    const counts = async () => {
      const { users } = await (await admin(server, "GET", "/admin/users")).json() as { users: Array<unknown> }
      const { applications } = await (await admin(server, "GET", "/admin/applications")).json() as { applications: Array<unknown> }
      return { users: JSON.stringify(users), applications: JSON.stringify(applications) }
    }
    try {
      const before = await counts()
      const form = (body: string) => ({
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body
      })
      const json = (body: string) => ({
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN_TOKEN}` },
        body
      })
      const fixed: ReadonlyArray<readonly [string, RequestInit | undefined]> = [
        ["/token", form("grant_type=authorization_code&code=%00&redirect_uri=%ED%A0%80&client_id=" + CLIENT_ID + "&client_secret=" + CLIENT_SECRET)],
        ["/token", form("grant_type[]=x&client_id[__proto__]=y")],
        ["/token", form("%")],
        ["/token", { method: "POST", headers: { "content-type": "application/json" }, body: "{\"grant_type\":1}" }],
        ["/token", { method: "POST", headers: { authorization: "Basic %%%" }, body: "" }],
        ["/oauth/token", form(`grant_type=refresh_token&refresh_token=${"a".repeat(100_000)}&client_id=${CLIENT_ID}&client_secret=${CLIENT_SECRET}`)],
        ["/oauth/revoke", form("token=")],
        ["/oauth/introspect", form(`token=%00&client_id=${CLIENT_ID}&client_secret=${CLIENT_SECRET}`)],
        ["/user.json?client_id=%00", { headers: { authorization: "Bearer \u00ff" } }],
        ["/user.json?client_id=a&client_id=b", { headers: { authorization: `Bearer ${ADA_TOKEN}` } }],
        ["/oauth/userinfo", { headers: { authorization: "Bearer " + "z".repeat(5000) } }],
        ["/oauth/authorize?client_id=%00&redirect_uri=%00", undefined],
        [`/oauth/authorize?client_id=${CLIENT_ID}&client_id=${CLIENT_ID}`, undefined],
        ["/users/sign_in?return_to=//evil.example", undefined],
        ["/users/sign_in", form("email=%00&password=%00&authenticity_token=%00")],
        ["/users/sign_in", { method: "POST", headers: { "content-type": "multipart/form-data; boundary=x" }, body: "--x--" }],
        ["/users/sign_out", form("authenticity_token[]=1")],
        ["/admin/users", json("{\"email\": \"\\u0000@x\", \"name\": \"x\"}")],
        ["/admin/users", json("{\"email\": \"a@example.com\", \"name\": \"\\ud800\"}")],
        ["/admin/users", json("{\"email\": [], \"name\": {}}")],
        ["/admin/users", json(`{"email": ${"[".repeat(5000)}${"]".repeat(5000)}}`)],
        ["/admin/applications", json("{\"name\": \"x\", \"home_uri\": \"javascript:alert(1)\", \"redirect_uris\": [\"http://evil.example/cb\"]}")],
        ["/admin/users/%00/permissions", { ...json("{\"application\": \"Publisher\", \"permissions\": [\"signin\"]}"), method: "PUT" }],
        ["/admin/tokens/%00", { method: "DELETE", headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }],
        ["/admin/events?user=%00", { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }]
      ]
      for (const [path, init] of fixed) {
        const response = await fetch(`${server.url}${path}`, init)
        expect({ path, status: response.status < 500 }).toEqual({ path, status: true })
        if (response.status >= 400 && response.headers.get("content-type")?.startsWith("application/json")) {
          expect((await response.json() as { error?: unknown }).error).toEqual(expect.any(String))
        }
      }

      const endpoints = ["/token", "/oauth/token", "/oauth/access_token", "/oauth/revoke", "/oauth/introspect", "/users/sign_in", "/users/sign_out"]
      const value = fc.oneof(fc.string(), fc.string({ unit: "binary" }), fc.constantFrom(CLIENT_ID, CLIENT_SECRET, ADA_TOKEN, "", "%00", "[]"))
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...endpoints),
          fc.dictionary(fc.constantFrom("grant_type", "code", "redirect_uri", "code_verifier", "refresh_token", "client_id", "client_secret", "token", "email", "password", "authenticity_token", "return_to", "__proto__"), value),
          fc.option(fc.constantFrom(`Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString("base64")}`, "Basic ::", "Bearer x")),
          async (path, fields, authorization) => {
            const response = await fetch(`${server.url}${path}`, {
              method: "POST",
              headers: {
                "content-type": "application/x-www-form-urlencoded",
                ...(authorization === null ? {} : { authorization })
              },
              body: new URLSearchParams(fields).toString()
            })
            const body = await response.text()
            // revoke answers 200 to anything from a known client and introspect says whether a token is active, but
            // nothing in these values can be exchanged for a token
            return response.status < 500 && !body.includes("access_token")
          }
        ),
        { numRuns: 150 }
      )
      await fc.assert(
        fc.asyncProperty(fc.dictionary(fc.constantFrom("response_type", "client_id", "redirect_uri", "state", "code_challenge", "code_challenge_method", "scope", "nonce"), value), async (query) => {
          const response = await fetch(`${server.url}/oauth/authorize?${new URLSearchParams(query)}`, { redirect: "manual" })
          await response.arrayBuffer()
          // without a signed-in session no code is ever given
          return response.status < 500 && !(response.headers.get("location") ?? "").includes("code=")
        }),
        { numRuns: 100 }
      )
      expect(await counts()).toEqual(before)
      expect(server.output()).not.toMatch(/"logLevel":"(ERROR|FATAL)"/)
    } finally {
      await stop(server)
    }
  })
})

describe.skipIf(process.env.TEST_DATABASE_URL === undefined)("the single sign-on on PostgreSQL, as operators meet it", () => {
  let database: { url: string; drop: () => Promise<unknown> }
  beforeAll(async () => {
    database = await createTestDatabase(process.env.TEST_DATABASE_URL!, "ssosystem", Effect.void)
  })
  afterAll(() => database?.drop())

  it("two copies share the brute-force counters: the 11th failure for a client from one address is refused by either", { timeout: 180_000 }, async () => {
    const env = { DATABASE_URL: database.url, DATA_DIR: Path.join(scratch, "two"), RUN: "web", TRUST_PROXY: "1" }
    const [first, second] = await Promise.all([serve(env), serve(env)])
    try {
      const wrong = { grant_type: "refresh_token", refresh_token: "x", client_id: CLIENT_ID, client_secret: "0".repeat(32) }
      for (let attempt = 0; attempt < 10; attempt++) {
        const response = await tokenRequest(attempt % 2 === 0 ? first! : second!, wrong, "198.51.100.1")
        expect(response.status).toBe(401)
      }
      for (const copy of [first!, second!]) {
        const right = await tokenRequest(copy, { ...wrong, client_secret: CLIENT_SECRET }, "198.51.100.1")
        expect(right.status).toBe(429)
        expect(Number(right.headers.get("retry-after"))).toBeGreaterThan(500)
        expect(await right.json()).toMatchObject({ error: "slow_down" })
        const elsewhere = await tokenRequest(copy, { ...wrong, client_secret: CLIENT_SECRET }, "203.0.113.77")
        expect(await elsewhere.json()).toMatchObject({ error: "invalid_grant" })
      }
    } finally {
      await stop(first!)
      await stop(second!)
    }
  })

  it("two copies answer /user.json from memory, and each sees a change made through the other at once", { timeout: 180_000 }, async () => {
    const env = { DATABASE_URL: database.url, DATA_DIR: Path.join(scratch, "holders"), RUN: "web" }
    const [first, second] = await Promise.all([serve(env), serve(env)])
    const userOn = async (copy: ServerProcess) => {
      const response = await fetch(`${copy.url}/user.json`, { headers: { authorization: `Bearer ${ADA_TOKEN}` } })
      const { user } = (await response.json()) as { user: { name: string; permissions: Array<string> } }
      return { name: user.name, permissions: user.permissions }
    }
    /** A notification takes a moment to arrive: well under the minute a kept holder could otherwise live. */
    const soon = async (copy: ServerProcess, expected: { name: string; permissions: Array<string> }) => {
      const deadline = Date.now() + 1000
      let seen = await userOn(copy)
      while (JSON.stringify(seen) !== JSON.stringify(expected) && Date.now() < deadline) {
        await pause(20)
        seen = await userOn(copy)
      }
      expect(seen).toEqual(expected)
    }
    try {
      const uid = await adaUid(first!)
      for (const copy of [first!, second!]) expect(await userOn(copy)).toEqual({ name: "Ada", permissions: ["signin"] })
      const granted = await admin(first!, "PUT", `/admin/users/${uid}/permissions`, { application: "Publisher", permissions: ["signin", "editor"] })
      expect(granted.status).toBe(200)
      await soon(second!, { name: "Ada", permissions: ["editor", "signin"] })
      expect((await admin(second!, "PATCH", `/admin/users/${uid}`, { name: "Ada King" })).status).toBe(200)
      await soon(first!, { name: "Ada King", permissions: ["editor", "signin"] })
      const restored = await admin(second!, "PUT", `/admin/users/${uid}/permissions`, { application: "Publisher", permissions: ["signin"] })
      expect(restored.status).toBe(200)
      expect((await admin(second!, "PATCH", `/admin/users/${uid}`, { name: "Ada" })).status).toBe(200)
      await soon(first!, { name: "Ada", permissions: ["signin"] })
    } finally {
      await stop(first!)
      await stop(second!)
    }
  })

  it("through a database outage: 503 with Retry-After meanwhile, then answers again", { timeout: 180_000 }, async () => {
    const target = new URL(database.url)
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) })
    const throughProxy = new URL(database.url)
    throughProxy.host = `127.0.0.1:${proxy.port}`
    const server = await serve({ DATABASE_URL: throughProxy.toString(), DATA_DIR: Path.join(scratch, "outage"), RUN: "web" })
    const user = () => fetch(`${server.url}/user.json`, { headers: { authorization: `Bearer ${ADA_TOKEN}` } })
    try {
      expect((await user()).status).toBe(200)
      await proxy.cut()
      await pause(500)
      const during = await user()
      expect(during.status).toBe(503)
      expect(during.headers.get("retry-after")).toBe("5")
      const token = await tokenRequest(server, { grant_type: "refresh_token", refresh_token: "x", client_id: CLIENT_ID, client_secret: CLIENT_SECRET })
      expect(token.status).toBe(503)
      await proxy.restore()
      const deadline = Date.now() + 30_000
      let after = await user()
      while (after.status !== 200 && Date.now() < deadline) {
        await pause(500)
        after = await user()
      }
      expect(after.status).toBe(200)
    } finally {
      await stop(server)
      await proxy.close()
    }
  })
})
