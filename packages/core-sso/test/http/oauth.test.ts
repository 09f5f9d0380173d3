import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { formToken, makeBrowser } from "../fixtures/browser"
import {
  CLIENT_ID,
  CLIENT_SECRET,
  PASSWORD,
  publisherBootstrap,
  publisherFlow,
  REDIRECT_URI,
  VERIFIER
} from "../fixtures/publisherFlow"
import { startSsoHost } from "./server"
import type { SsoHost } from "./server"

let server: SsoHost

beforeAll(async () => {
  server = await startSsoHost({ bootstrap: publisherBootstrap })
})
afterAll(() => server?.close())

const { authorizePath, codeFor, signInThroughPages, token } = publisherFlow(() => server.url)

describe("session cookies", () => {
  it("are Secure, with the __Host- prefix, once the issuer is https", async () => {
    const secureHost = await startSsoHost({ bootstrap: publisherBootstrap, settings: { issuer: "https://signon.example" } })
    try {
      const page = await fetch(`${secureHost.url}/users/sign_in`)
      const cookie = page.headers.getSetCookie().find((line) => line.includes("civicstack_sso_csrf"))
      expect(cookie).toMatch(/^__Host-civicstack_sso_csrf=[0-9a-f]{32}; /)
      expect(cookie).toMatch(/; Secure/)
      expect(cookie).toMatch(/; Path=\//)
      expect(cookie).not.toMatch(/Domain=/i)
    } finally {
      await secureHost.close()
    }
  })

  it("are plain on an http issuer, where browsers would refuse secure ones", async () => {
    const page = await fetch(`${server.url}/users/sign_in`)
    const cookie = page.headers.getSetCookie().find((line) => line.includes("civicstack_sso_csrf"))
    expect(cookie).toMatch(/^civicstack_sso_csrf=/)
    expect(cookie).not.toMatch(/Secure/)
  })
})

describe("the authorization code flow over HTTP", () => {
  it("signs in through the pages, exchanges the code with PKCE and reads the user", async () => {
    const code = await codeFor("ada@example.com")
    const response = await token({
      grant_type: "authorization_code",
      code,
      redirect_uri: REDIRECT_URI,
      code_verifier: VERIFIER,
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET
    })
    expect(response.status).toBe(200)
    expect(response.headers.get("cache-control")).toBe("no-store")
    expect(response.headers.get("pragma")).toBe("no-cache")
    const tokens = await response.json() as { access_token: string; expires_in: number; refresh_token: string }
    expect(tokens.expires_in).toBe(7200)
    const user = await fetch(`${server.url}/user.json`, { headers: { authorization: `Bearer ${tokens.access_token}` } })
    expect(user.status).toBe(200)
    expect(await user.json()).toMatchObject({
      user: { name: "Ada", email: "ada@example.com", permissions: ["editor", "signin"], disabled: false }
    })
  })

  it("answers every token endpoint alias", async () => {
    for (const path of ["/oauth/token", "/oauth/access_token"]) {
      const response = await fetch(`${server.url}${path}`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          authorization: `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString("base64")}`
        },
        body: "grant_type=authorization_code&code=00000000000000000000000000000000&redirect_uri=x"
      })
      expect(response.status).toBe(400)
      expect(await response.json()).toMatchObject({ error: "invalid_grant" })
    }
  })

  it("a user without signin sees the no-access page, and gets no code", async () => {
    const { location, response } = await signInThroughPages("bob@example.com")
    expect(location).toBeUndefined()
    expect(response.status).toBe(403)
    expect(await response.text()).toContain("You do not have access to Publisher")
  })

  it("a wrong redirect_uri or unknown client shows an error page and never redirects", async () => {
    const browser = makeBrowser(server.url)
    for (const params of [{ redirect_uri: "https://evil.example/cb" }, { client_id: "f".repeat(32) }]) {
      const response = await browser.get(authorizePath(params))
      expect(response.status).toBe(400)
      expect(response.headers.get("location")).toBeNull()
      expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8")
      expect(response.headers.get("content-security-policy")).toContain("default-src 'none'")
    }
  })

  it("a missing state is sent back as invalid_request", async () => {
    const browser = makeBrowser(server.url)
    const response = await browser.get(authorizePath({ state: "" }))
    expect(response.status).toBe(302)
    expect(new URL(response.headers.get("location")!).searchParams.get("error")).toBe("invalid_request")
  })

  it("token endpoint errors have RFC 6749 bodies and statuses", async () => {
    const cases: Array<[Record<string, string>, Record<string, string>, number, string]> = [
      [{ grant_type: "authorization_code" }, {}, 401, "invalid_client"],
      [{ grant_type: "password", client_id: CLIENT_ID, client_secret: CLIENT_SECRET }, {}, 400, "unsupported_grant_type"],
      [{ client_id: CLIENT_ID, client_secret: CLIENT_SECRET }, {}, 400, "invalid_request"],
      [{ grant_type: "refresh_token", client_id: CLIENT_ID, client_secret: CLIENT_SECRET }, {}, 400, "invalid_request"],
      [{ grant_type: "refresh_token", refresh_token: "0".repeat(32), client_id: CLIENT_ID, client_secret: CLIENT_SECRET }, {}, 400, "invalid_grant"],
      [
        { grant_type: "refresh_token", client_id: CLIENT_ID, client_secret: CLIENT_SECRET },
        { authorization: `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString("base64")}` },
        400,
        "invalid_request"
      ]
    ]
    for (const [fields, headers, status, error] of cases) {
      const response = await token(fields, headers)
      expect(response.status, JSON.stringify(fields)).toBe(status)
      const body = await response.json() as { error: string; error_description: string }
      expect(body.error).toBe(error)
      expect(typeof body.error_description).toBe("string")
      if (status === 401) expect(response.headers.get("www-authenticate")).toMatch(/^Basic /)
    }
    const json = await fetch(`${server.url}/token`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })
    expect(json.status).toBe(400)
    expect(await json.json()).toMatchObject({ error: "invalid_request" })
    const repeated = await fetch(`${server.url}/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=a&grant_type=b"
    })
    expect(await repeated.json()).toMatchObject({ error: "invalid_request", error_description: "The grant_type parameter is repeated" })
  })

  it("user.json without a usable token is 401 with WWW-Authenticate", async () => {
    for (const authorization of [undefined, "Bearer 00000000000000000000000000000000", "Basic abc", "Bearer"]) {
      const response = await fetch(`${server.url}/user.json`, { headers: authorization === undefined ? {} : { authorization } })
      expect(response.status).toBe(401)
      expect(response.headers.get("www-authenticate")).toMatch(/^Bearer realm="civicstack", error="invalid_token"/)
    }
  })

  it("publishes its metadata and keys, which caches may keep for a minute", async () => {
    const response = await fetch(`${server.url}/.well-known/oauth-authorization-server`)
    expect(response.status).toBe(200)
    expect(response.headers.get("cache-control")).toBe("public, max-age=60")
    for (const path of ["/.well-known/openid-configuration", "/.well-known/jwks.json"]) {
      const other = await fetch(`${server.url}${path}`)
      expect([path, other.status, other.headers.get("cache-control")]).toEqual([path, 200, "public, max-age=60"])
    }
    expect(await response.json()).toMatchObject({
      issuer: "http://localhost:3000",
      token_endpoint: "http://localhost:3000/oauth/token",
      code_challenge_methods_supported: ["S256"]
    })
  })

  it("signs out, and a forged sign-out form does not", async () => {
    const { browser } = await signInThroughPages("ada@example.com")
    const signedIn = await browser.get("/users/sign_in")
    const html = await signedIn.text()
    expect(html).toContain("You are signed in")
    const forged = await browser.postForm("/users/sign_out", { authenticity_token: "0".repeat(32) })
    expect(forged.status).toBe(403)
    const out = await browser.postForm("/users/sign_out", { authenticity_token: formToken(html) })
    expect(out.status).toBe(200)
    expect(await out.text()).toContain("You have signed out")
    const after = await browser.get("/users/sign_in")
    expect(await after.text()).toContain("Sign in")
  })

  it("a sign-in form without its CSRF cookie is refused", async () => {
    const browser = makeBrowser(server.url)
    const page = await browser.get("/users/sign_in")
    const html = await page.text()
    browser.cookies.clear()
    const response = await browser.postForm("/users/sign_in", { authenticity_token: formToken(html), email: "ada@example.com", password: PASSWORD })
    expect(response.status).toBe(403)
  })

  it("a wrong password shows the sign-in page again with the problem", async () => {
    const browser = makeBrowser(server.url)
    const html = await (await browser.get("/users/sign_in")).text()
    const response = await browser.postForm("/users/sign_in", { authenticity_token: formToken(html), email: "ada@example.com", password: "wrong password!" })
    expect(response.status).toBe(401)
    expect(await response.text()).toContain("There is a problem")
  })
})
