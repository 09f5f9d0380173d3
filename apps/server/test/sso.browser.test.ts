import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startInProcessServer } from "./inProcessServer"
import type { InProcessServer } from "./inProcessServer"
import { writeBootstrap } from "./sso/bootstrap"
import { expectAccessible } from "./sso/axe"
import { launchChromium } from "./sso/chromium"
import { authorizeUrl as authorizeUrlOf, newPage as newPageIn, signInWithPassword, startClientApp } from "./sso/pages"

const CLIENT_ID = "3333333333333333cccccccccccccccc"
const PASSWORD = "a password for the browser"

let server: InProcessServer
let browser: Browser
let clientApp: Awaited<ReturnType<typeof startClientApp>>
let callbackUrl: string
let bootstrap: Awaited<ReturnType<typeof writeBootstrap>>

beforeAll(async () => {
  clientApp = await startClientApp()
  callbackUrl = clientApp.callbackUrl
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
  await clientApp?.close()
  await bootstrap?.remove()
})

const authorizeUrl = () => authorizeUrlOf(server.url, CLIENT_ID, callbackUrl)

const newPage = () => newPageIn(browser)

const signIn = (page: Page, email: string, password = PASSWORD) => signInWithPassword(page, email, password)

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

  it("signing in without an application lands on the home page, which lists the user's applications and signs out", async () => {
    const page = await newPage()
    await page.goto(`${server.url}/users/sign_in`)
    await signIn(page, "ada@example.com")
    await page.waitForSelector("h1:has-text('Your applications')")
    expect(await page.getByRole("link", { name: "Publisher" }).getAttribute("href")).toBe("https://publisher.example")
    expect(await page.getByRole("link", { name: "Users", exact: true }).count()).toBe(0)
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
