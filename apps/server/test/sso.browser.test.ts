import axe from "axe-core"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startInProcessServer } from "./inProcessServer"
import type { InProcessServer } from "./inProcessServer"
import { writeBootstrap } from "./sso/bootstrap"
import { launchChromium } from "./sso/chromium"

const CLIENT_ID = "3333333333333333cccccccccccccccc"
const PASSWORD = "a password for the browser"

let server: InProcessServer
let browser: Browser
let clientApp: Http.Server
let callbackUrl: string
let bootstrap: Awaited<ReturnType<typeof writeBootstrap>>

beforeAll(async () => {
  clientApp = Http.createServer((_request, response) => {
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end("<!doctype html><title>Client</title><h1>Back at the client</h1>")
  })
  await new Promise<void>((resolve) => clientApp.listen(0, "127.0.0.1", resolve))
  callbackUrl = `http://127.0.0.1:${(clientApp.address() as AddressInfo).port}/auth/callback`
  bootstrap = await writeBootstrap({
    applications: [{
      name: "Publisher",
      home_uri: "https://publisher.example",
      redirect_uris: [callbackUrl],
      client_id: CLIENT_ID,
      client_secret: "4444444444444444dddddddddddddddd"
    }],
    users: [
      { email: "ada@example.com", name: "Ada", password: PASSWORD, permissions: { Publisher: ["signin"] } },
      { email: "bob@example.com", name: "Bob", password: PASSWORD, permissions: {} },
      { email: "carol@example.com", name: "Carol", password: PASSWORD, permissions: { Publisher: ["signin"] } }
    ]
  })
  server = await startInProcessServer({ CIVICSTACK_BOOTSTRAP: bootstrap.file, SERVICES: "sso" })
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
  await server?.close()
  await new Promise((resolve) => clientApp?.close(resolve))
  await bootstrap?.remove()
})

const authorizeUrl = () =>
  `${server.url}/oauth/authorize?${new URLSearchParams({
    response_type: "code",
    client_id: CLIENT_ID,
    redirect_uri: callbackUrl,
    state: "browser-state"
  })}`

/** axe-core on the page as it is; the pages' CSP allows no scripts, so the context bypasses it for the check only. */
const expectAccessible = async (page: Page) => {
  await page.addScriptTag({ content: axe.source })
  const results = await page.evaluate(() => (globalThis as unknown as { axe: typeof axe }).axe.run())
  expect(results.violations.map(({ help, id, nodes }) => ({ id, help, nodes: nodes.map((node) => node.html) }))).toEqual([])
}

const newPage = async () => (await browser.newContext({ bypassCSP: true, javaScriptEnabled: true })).newPage()

const signIn = async (page: Page, email: string, password = PASSWORD) => {
  await page.getByLabel("Email address").fill(email)
  await page.getByLabel("Password").fill(password)
  await page.getByRole("button", { name: "Sign in" }).click()
}

describe("the sign-in pages in a real browser", () => {
  it("signs in from an application's request and goes back to it with a code", async () => {
    const page = await newPage()
    await page.goto(authorizeUrl())
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Sign in")
    expect(await page.title()).toBe("Sign in – civicstack sign-on")
    expect(await page.getByText("to continue to Publisher").count()).toBe(1)
    await expectAccessible(page)
    await signIn(page, "ada@example.com")
    await page.waitForURL((url) => url.href.startsWith(callbackUrl))
    const back = new URL(page.url())
    expect(back.searchParams.get("state")).toBe("browser-state")
    expect(back.searchParams.get("code")).toMatch(/^[0-9a-f]{32}$/)
  })

  it("shows the no-access page to a user without signin, and signs out", async () => {
    const page = await newPage()
    await page.goto(authorizeUrl())
    await signIn(page, "bob@example.com")
    await page.waitForSelector("h1:has-text('You do not have access to Publisher')")
    await expectAccessible(page)
    await page.getByRole("button", { name: "Sign out" }).click()
    await page.waitForSelector("h1:has-text('You have signed out')")
    await expectAccessible(page)
  })

  it("the signed-in page signs out of every application", async () => {
    const page = await newPage()
    await page.goto(`${server.url}/users/sign_in`)
    await signIn(page, "ada@example.com")
    await page.waitForSelector("h1:has-text('You are signed in')")
    await expectAccessible(page)
    await page.getByRole("button", { name: "Sign out" }).click()
    await page.waitForSelector("h1:has-text('You have signed out')")
    await page.goto(authorizeUrl())
    expect(new URL(page.url()).pathname).toBe("/users/sign_in")
  })

  it("a wrong password shows the problem; after five, this network is asked to wait", async () => {
    const page = await newPage()
    await page.goto(`${server.url}/users/sign_in`)
    await signIn(page, "carol@example.com", "not her password")
    await page.waitForSelector("[role=alert]")
    await expectAccessible(page)
    expect(await page.getByLabel("Email address").inputValue()).toBe("carol@example.com")
    for (let attempt = 2; attempt <= 5; attempt++) await signIn(page, "carol@example.com", `wrong ${attempt} times`)
    await signIn(page, "carol@example.com")
    await page.waitForSelector("text=Too many attempts to sign in")
    await expectAccessible(page)
  })

  it("an unknown application gets the error page", async () => {
    const page = await newPage()
    const response = await page.goto(authorizeUrl().replace(CLIENT_ID, "f".repeat(32)))
    expect(response?.status()).toBe(400)
    await page.waitForSelector("h1:has-text('This sign-in link does not work')")
    await expectAccessible(page)
  })

  it("works without JavaScript", async () => {
    const context = await browser.newContext({ javaScriptEnabled: false })
    const page = await context.newPage()
    await page.goto(authorizeUrl())
    await signIn(page, "ada@example.com")
    await page.waitForURL((url) => url.href.startsWith(callbackUrl))
    await context.close()
  })
})
