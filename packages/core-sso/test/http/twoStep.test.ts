import { Duration } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { defaultSsoSettings } from "../../src/settings"
import { totpCode } from "../../src/domain/twoStep"
import { formToken, makeBrowser } from "../fixtures/browser"
import { CLIENT_ID, CLIENT_SECRET, PASSWORD, publisherFlow, REDIRECT_URI } from "../fixtures/publisherFlow"
import { startSsoHost } from "./server"
import type { SsoHost } from "./server"

const SECRET = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"

let server: SsoHost

beforeAll(async () => {
  server = await startSsoHost({
    // every sign-in counts as long ago: turning on two-step verification asks for the password
    settings: { signIn: { ...defaultSsoSettings.signIn, recentFor: Duration.zero } },
    bootstrap: {
      applications: [{
        name: "Publisher",
        home_uri: "https://publisher.example",
        redirect_uris: [REDIRECT_URI],
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET
      }],
      users: ["cleo", "dan", "eve", "fay"].map((name) => ({
        email: `${name}@example.com`,
        name,
        password: PASSWORD,
        ...(name === "fay" ? {} : { otp_secret: SECRET }),
        permissions: { Publisher: ["signin"] }
      }))
    }
  })
})
afterAll(() => server?.close())

const { authorizePath, signInThroughPages } = publisherFlow(() => server.url)

/** Signs in with the password from an authorization request: the browser, at the code page. */
const atCodePage = async (email: string) => {
  const { browser, location, response } = await signInThroughPages(email)
  expect(location).toBeUndefined()
  const html = await response.text()
  expect(html).toContain("Enter your code")
  return { browser, html, returnTo: /name="return_to" value="([^"]*)"/.exec(html)![1]!.replace(/&amp;/g, "&") }
}

const codeNow = (offsetSteps = 0) => totpCode(SECRET, Date.now() + offsetSteps * 30_000)

describe("the second step over HTTP", () => {
  it("the password alone opens nothing: no code for the application, no account page", async () => {
    const { browser } = await atCodePage("cleo@example.com")
    const authorize = await browser.get(authorizePath())
    expect(authorize.status).toBe(302)
    expect(authorize.headers.get("location")).toMatch(/^\/users\/sign_in\?/)
    const account = await browser.get("/account")
    expect(account.status).toBe(303)
    expect(account.headers.get("location")).toMatch(/^\/users\/sign_in/)
  })

  it("a forged form is refused and uses nothing: the same code then signs in", async () => {
    const { browser, html, returnTo } = await atCodePage("dan@example.com")
    const code = codeNow()
    const forged = await browser.postForm("/users/two_step", { authenticity_token: "0".repeat(32), code, return_to: returnTo })
    expect(forged.status).toBe(403)
    const { location } = await browser.follow(
      await browser.postForm("/users/two_step", { authenticity_token: formToken(html), code, return_to: returnTo })
    )
    expect(location?.origin).toBe("https://publisher.example")
    expect(location?.searchParams.get("code")).toMatch(/^[0-9a-f]{32}$/)
  })

  it("bad input gets a page naming the problem, never a server error, and an outside return_to is not followed", async () => {
    const { browser, html } = await atCodePage("eve@example.com")
    const token = formToken(html)
    const empty = await browser.postForm("/users/two_step", { authenticity_token: token, code: "  " })
    expect(empty.status).toBe(400)
    expect(await empty.text()).toContain("Enter the code")
    for (const code of ["12345", "1234567", "abcdef", "x".repeat(5000), "000000\u0000"]) {
      const wrong = await browser.postForm("/users/two_step", { authenticity_token: token, code })
      expect(wrong.status).toBe(401)
      expect(await wrong.text()).toContain("That code is not right")
    }
    const json = await browser.request("/users/two_step", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ authenticity_token: token, code: codeNow() })
    })
    expect(json.status).toBeGreaterThanOrEqual(400)
    expect(json.status).toBeLessThan(500)
    const elsewhere = await browser.postForm("/users/two_step", {
      authenticity_token: token,
      code: codeNow(),
      return_to: "https://evil.example/oauth/authorize?x=1"
    })
    expect(elsewhere.status).toBe(303)
    expect(elsewhere.headers.get("location")).toBe("/")
  })

  it("the set-up form needs its CSRF token, and the password of a session signed in a while ago: else nothing turns on", async () => {
    const browser = makeBrowser(server.url)
    const page = await browser.get("/users/sign_in")
    const signedIn = await browser.follow(await browser.postForm("/users/sign_in", {
      authenticity_token: formToken(await page.text()),
      email: "fay@example.com",
      password: PASSWORD
    }))
    expect(await signedIn.response.text()).toContain("Your applications")
    const setUp = await (await browser.get("/account/two_step")).text()
    const secret = /<code class="secret">([^<]*)<\/code>/.exec(setUp)![1]!.replaceAll(" ", "")
    const forged = await browser.postForm("/account/two_step", {
      authenticity_token: "0".repeat(32),
      code: totpCode(secret, Date.now())
    })
    expect(forged.status).toBe(403)
    expect(await (await browser.get("/account")).text()).toContain("Two-step verification is off")
    // a session that signed in a while ago must give the password too, so a stolen one cannot tie the account to its device
    expect(setUp).toContain(`name="password"`)
    for (const password of [undefined, "not the password"]) {
      const withoutPassword = await browser.postForm("/account/two_step", {
        authenticity_token: formToken(setUp),
        code: totpCode(secret, Date.now()),
        ...(password === undefined ? {} : { password })
      })
      expect(withoutPassword.status).toBe(401)
      expect(await (await browser.get("/account")).text()).toContain("Two-step verification is off")
    }
    const turnedOn = await browser.postForm("/account/two_step", {
      authenticity_token: formToken(setUp),
      password: PASSWORD,
      code: totpCode(secret, Date.now())
    })
    expect(turnedOn.status).toBe(200)
    expect(turnedOn.headers.get("cache-control")).toBe("no-store")
    expect((await turnedOn.text()).match(/<li><code>[a-z2-9-]{19}<\/code><\/li>/g)).toHaveLength(10)
    expect(await (await browser.get("/account")).text()).toContain("Two-step verification is on")
  })
})
