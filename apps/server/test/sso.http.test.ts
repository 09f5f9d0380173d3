import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { Effect, Metric } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fastAnswersServed } from "../src/http/fastAnswers"
import { startInProcessServer } from "./inProcessServer"
import { writeBootstrap } from "./sso/bootstrap"
import type { InProcessServer } from "./inProcessServer"
import {
  CLIENT_ID,
  CLIENT_SECRET,
  OTHER_CLIENT_ID,
  OTHER_CLIENT_SECRET,
  publisherBootstrap,
  publisherFlow,
  REDIRECT_URI,
  VERIFIER
} from "../../../packages/core-sso/test/fixtures/publisherFlow"

// The SSO's own endpoints are tested on the core's test host (packages/core-sso/test/http); here, what the server adds.
let server: InProcessServer
let bootstrap: Awaited<ReturnType<typeof writeBootstrap>>

beforeAll(async () => {
  bootstrap = await writeBootstrap(publisherBootstrap)
  server = await startInProcessServer({ CIVICSTACK_BOOTSTRAP: bootstrap.file })
})
afterAll(async () => {
  await server?.close()
  await bootstrap?.remove()
})

const { codeFor, token } = publisherFlow(() => server.url)

const servedFast = () => Effect.runSync(Metric.value(fastAnswersServed)).count

/** Status, headers (less those of the connection and the clock) and body of a response. */
const answerOf = async (response: Response) => {
  const headers: Record<string, string> = {}
  response.headers.forEach((value, name) => {
    if (!["date", "connection", "keep-alive", "x-request-id"].includes(name)) headers[name] = value
  })
  return { status: response.status, headers, body: await response.text() }
}

/**
 * A token request sent as it is answered before the HTTP stack, and the same request as only the stack answers it (a
 * query after the path leaves it to the stack, whose route ignores it).
 */
const tokenRequest = (path: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body
  })

const fastAndStack = async (path: string, body: string, headers: Record<string, string> = {}) => {
  const before = servedFast()
  const fast = await answerOf(await tokenRequest(path, body, headers))
  expect(servedFast(), `${path} ${body} answered before the stack`).toBe(before + 1)
  const stack = await answerOf(await tokenRequest(`${path}?through=stack`, body, headers))
  expect(servedFast(), `${path}?through=stack ${body} answered by the stack`).toBe(before + 1)
  return { fast, stack }
}

const basic = (id: string, secret: string) => ({ authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString("base64")}` })

const refreshTokenFor = async (email: string) => {
  const response = await token({
    grant_type: "authorization_code",
    code: await codeFor(email),
    redirect_uri: REDIRECT_URI,
    code_verifier: VERIFIER,
    client_id: CLIENT_ID,
    client_secret: CLIENT_SECRET
  })
  expect(response.status).toBe(200)
  return ((await response.json()) as { refresh_token: string }).refresh_token
}

const refreshForm = (refreshToken: string, client: Record<string, string> = { client_id: CLIENT_ID, client_secret: CLIENT_SECRET }) =>
  new URLSearchParams({ grant_type: "refresh_token", refresh_token: refreshToken, ...client }).toString()

describe("POST /token answered before the HTTP stack", () => {
  it("grants a refresh as the stack does, with the client in the body or by HTTP Basic, on every alias", async () => {
    const paths = ["/token", "/oauth/token", "/oauth/access_token"]
    for (const [index, path] of paths.entries()) {
      const first = await refreshTokenFor("ada@example.com")
      const second = await refreshTokenFor("ada@example.com")
      // a refresh token is used once: the stack is sent another one of the same kind
      const [form, headers] = index === 1
        ? [(refreshToken: string) => refreshForm(refreshToken, {}), basic(CLIENT_ID, CLIENT_SECRET)] as const
        : [(refreshToken: string) => refreshForm(refreshToken), {}] as const
      const before = servedFast()
      const fast = await answerOf(await tokenRequest(path, form(first), headers))
      expect(servedFast()).toBe(before + 1)
      const stack = await answerOf(await tokenRequest(`${path}?through=stack`, form(second), headers))
      expect(servedFast()).toBe(before + 1)
      expect(fast.status).toBe(200)
      expect(fast.headers).toEqual(stack.headers)
      expect(fast.headers).toMatchObject({
        "cache-control": "no-store",
        pragma: "no-cache",
        "content-type": "application/json; charset=utf-8"
      })
      const granted = (answer: typeof fast) => {
        const { access_token, created_at, refresh_token, ...rest } = JSON.parse(answer.body) as Record<string, unknown>
        expect(access_token).toMatch(/^[0-9a-f]{32}$/)
        expect(refresh_token).toMatch(/^[0-9a-f]{32}$/)
        expect(typeof created_at).toBe("number")
        return { keys: Object.keys(JSON.parse(answer.body)), rest }
      }
      expect(granted(fast)).toEqual(granted(stack))
      expect(granted(fast).rest).toEqual({ token_type: "Bearer", expires_in: 7200 })
      for (const answer of [stack, fast]) {
        const { access_token } = JSON.parse(answer.body) as { access_token: string }
        const user = await fetch(`${server.url}/user.json`, { headers: { authorization: `Bearer ${access_token}` } })
        expect(user.status, `${index} ${answer === fast ? "fast" : "stack"} ${await user.clone().text()}`).toBe(200)
      }
    }
  })

  it("refuses as the stack does: each RFC 6749 error with its status, headers and body", async () => {
    const client = { client_id: CLIENT_ID, client_secret: CLIENT_SECRET }
    const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString()
    const cases: Array<readonly [string, Record<string, string>?]> = [
      [form({ grant_type: "refresh_token", refresh_token: "0".repeat(32), ...client })],
      [form({ grant_type: "refresh_token", ...client })],
      [form({ grant_type: "refresh_token", refresh_token: "x" }), basic(CLIENT_ID, CLIENT_SECRET)],
      [form({ grant_type: "refresh_token", refresh_token: "x", ...client }), basic(CLIENT_ID, CLIENT_SECRET)],
      [form({ grant_type: "password", ...client })],
      [form(client)],
      [form({ grant_type: "authorization_code", code: "0".repeat(32), redirect_uri: REDIRECT_URI, ...client })],
      [form({ grant_type: "refresh_token", refresh_token: "x" })],
      [form({ grant_type: "refresh_token", refresh_token: "x", client_id: CLIENT_ID, client_secret: "0".repeat(32) })],
      ["grant_type=a&grant_type=b"],
      ["%"],
      [""]
    ]
    const statuses: Array<number> = []
    for (const [body, headers] of cases) {
      const { fast, stack } = await fastAndStack("/token", body, headers)
      expect(fast, body).toEqual(stack)
      expect(fast.headers["cache-control"]).toBe("no-store")
      expect(JSON.parse(fast.body)).toEqual({ error: expect.any(String), error_description: expect.any(String) })
      statuses.push(fast.status)
    }
    expect(statuses).toEqual([400, 400, 400, 400, 400, 400, 400, 401, 401, 400, 401, 401])
  })

  it("detects the reuse of a refresh token and revokes its chain, as the stack does", async () => {
    const reused = async (path: string) => {
      const refreshToken = await refreshTokenFor("ada@example.com")
      const granted = await tokenRequest("/token", refreshForm(refreshToken))
      const { access_token } = (await granted.json()) as { access_token: string }
      const before = servedFast()
      const answer = await answerOf(await tokenRequest(path, refreshForm(refreshToken)))
      expect(servedFast() - before).toBe(path === "/token" ? 1 : 0)
      const user = await fetch(`${server.url}/user.json`, { headers: { authorization: `Bearer ${access_token}` } })
      return { answer, chainRevoked: user.status === 401 }
    }
    const fast = await reused("/token")
    expect(fast.answer.status).toBe(400)
    expect(JSON.parse(fast.answer.body)).toMatchObject({ error: "invalid_grant" })
    expect(fast.chainRevoked).toBe(true)
    expect(fast).toEqual(await reused("/token?through=stack"))
  })

  it("throttles failed client authentications as the stack does: 429 with Retry-After", async () => {
    const wrong = refreshForm("x", { client_id: OTHER_CLIENT_ID, client_secret: "0".repeat(32) })
    for (let attempt = 0; attempt < 10; attempt++) {
      const response = await tokenRequest(attempt % 2 === 0 ? "/token" : "/token?through=stack", wrong)
      expect(response.status).toBe(401)
    }
    const right = refreshForm("x", { client_id: OTHER_CLIENT_ID, client_secret: OTHER_CLIENT_SECRET })
    const { fast, stack } = await fastAndStack("/token", right)
    expect(fast.status).toBe(429)
    expect(JSON.parse(fast.body)).toMatchObject({ error: "slow_down" })
    expect(Number(fast.headers["retry-after"])).toBeGreaterThan(500)
    // the seconds to wait may tick between the two requests
    const withoutWait = ({ body, headers, status }: typeof fast) => ({
      status,
      headers: { ...headers, "retry-after": "n" },
      body: body.replace(/\d+ seconds/, "n seconds")
    })
    expect(withoutWait(fast)).toEqual(withoutWait(stack))
  })

  it("leaves to the stack a request it cannot take from its headers alone", async () => {
    const body = refreshForm("0".repeat(32))
    const before = servedFast()
    const chunked = await fetch(`${server.url}/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new Blob([body]).stream(),
      duplex: "half"
    } as RequestInit)
    const json = await tokenRequest("/token", JSON.stringify({ grant_type: "refresh_token" }), { "content-type": "application/json" })
    const large = await tokenRequest("/token", `${body}&${"x".repeat(9000)}=1`)
    const get = await fetch(`${server.url}/token`)
    expect(servedFast()).toBe(before)
    expect(await chunked.json()).toMatchObject({ error: "invalid_grant" })
    expect(await json.json()).toMatchObject({ error: "invalid_request" })
    expect(await large.json()).toMatchObject({ error: "invalid_grant" })
    expect(get.status).toBe(405)
  })
})

describe("secrets at rest", () => {
  it("seals the signing key under a key made once and kept in DATA_DIR: the database holds no private key", async () => {
    const tokens = await (await token({
      grant_type: "authorization_code",
      code: await codeFor("ada@example.com", { scope: "openid" }),
      redirect_uri: REDIRECT_URI,
      code_verifier: VERIFIER,
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET
    })).json() as { id_token?: string }
    expect(tokens.id_token).toBeDefined()
    const rows = await Effect.runPromise(server.sql<{ private_jwk: Record<string, unknown> }>`SELECT private_jwk FROM sso.signing_keys`)
    expect(rows.length).toBeGreaterThan(0)
    for (const { private_jwk } of rows) {
      expect(Object.keys(private_jwk)).toEqual(["sealed"])
      expect(String(private_jwk["sealed"])).toMatch(/^sealed\.v1\./)
    }
    const keyFile = await Fs.stat(Path.join(server.dataDir, "sso-encryption-key"))
    expect(keyFile.mode & 0o777).toBe(0o600)
  })
})
