import type { Browser, Page } from "playwright-core"
import { freePort } from "@civicstack/kit/testing"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startPushReceiver } from "../../../packages/core-sso/test/fixtures/pushReceiver"
import { startInProcessServer } from "./inProcessServer"
import type { InProcessServer } from "./inProcessServer"
import { readOutbox, until } from "./outbox"
import { authenticatorCode } from "./sso/authenticatorApp"
import { writeBootstrap } from "./sso/bootstrap"
import { expectAccessible } from "./sso/axe"
import { launchChromium } from "./sso/chromium"
import { authorizeUrl, newPage, signInWithPassword, startClientApp } from "./sso/pages"

const CLIENT_ID = "7777777777777777aaaaaaaaaaaaaaaa"
const CLIENT_SECRET = "8888888888888888bbbbbbbbbbbbbbbb"
const PASSWORD = "a password for the admin pages"
const ROOT_SECRET = "MFRGGZDFMZTWQ2LKNNWG23TPOBYXE43U"

let server: InProcessServer
let browser: Browser
let receiver: Awaited<ReturnType<typeof startPushReceiver>>
let clientApp: Awaited<ReturnType<typeof startClientApp>>
let bootstrap: Awaited<ReturnType<typeof writeBootstrap>>

beforeAll(async () => {
  receiver = await startPushReceiver()
  clientApp = await startClientApp()
  bootstrap = await writeBootstrap({
    applications: [{
      name: "Publisher",
      home_uri: `${receiver.url}/publisher`,
      redirect_uris: [clientApp.callbackUrl],
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      permissions: ["signin", "editor"],
      push_updates: true
    }],
    users: [
      { email: "root@example.com", name: "Root", password: PASSWORD, admin: true, otp_secret: ROOT_SECRET },
      { email: "carol@example.com", name: "Carol Danvers", password: PASSWORD, permissions: { Publisher: ["signin"] } },
      { email: "bob@example.com", name: "Bob", password: PASSWORD, permissions: { Publisher: ["signin"] } }
    ]
  })
  // the links in emails start with the issuer, so it is this server's own address
  const port = await freePort()
  server = await startInProcessServer({
    CIVICSTACK_BOOTSTRAP: bootstrap.file,
    SERVICES: "sso",
    SSO_ALLOW_PRIVATE_ADDRESSES: "true",
    PORT: String(port),
    SSO_ISSUER: `http://127.0.0.1:${port}`
  })
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
  await server?.close()
  await receiver?.close()
  await clientApp?.close()
  await bootstrap?.remove()
})

/** Carol signs in to Publisher, which exchanges her code: Publisher is now an application she uses, told of her changes. */
const carolUsesPublisher = async () => {
  const page = await newPage(browser)
  await page.goto(authorizeUrl(server.url, CLIENT_ID, clientApp.callbackUrl))
  await signInWithPassword(page, "carol@example.com", PASSWORD)
  await page.waitForURL((url) => url.href.startsWith(clientApp.callbackUrl))
  const code = new URL(page.url()).searchParams.get("code")!
  const token = await fetch(`${server.url}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code,
      redirect_uri: clientApp.callbackUrl,
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET
    })
  })
  expect(token.status).toBe(200)
  await page.context().close()
}

const NEW_PASSWORD = "a password chosen from an email"

const emailsTo = (address: string) => async () => (await readOutbox(server.dataDir)).filter((message) => message.to === address)

/** The link in an email's Markdown. */
const linkIn = (markdown: string) => /\]\((http[^)]+)\)/.exec(markdown)![1]!

const choosePassword = async (page: Page, password: string) => {
  await page.getByLabel("New password", { exact: true }).fill(password)
  await page.getByLabel("New password again").fill(password)
}

let rootPage: Page | undefined

/** The administrator's browser, signed in once (a code works once, so the tests share one sign-in), at home. */
const signInAsRoot = async () => {
  if (rootPage === undefined) {
    rootPage = await newPage(browser)
    await rootPage.goto(`${server.url}/`)
    await signInWithPassword(rootPage, "root@example.com", PASSWORD)
    await rootPage.getByLabel("Code from your authenticator app").fill(authenticatorCode(ROOT_SECRET, Date.now()))
    await rootPage.getByRole("button", { name: "Continue" }).click()
  } else {
    await rootPage.goto(`${server.url}/`)
  }
  await rootPage.waitForSelector("h1:has-text('Your applications')")
  return rootPage
}

const pushesTo = (path: string, method: string) => receiver.received.filter((push) => push.path === path && push.method === method)

const waitForPush = async (path: string, method: string, count: number) => {
  const deadline = Date.now() + 20_000
  while (pushesTo(path, method).length < count) {
    if (Date.now() > deadline) throw new Error(`no ${method} ${path}; received ${JSON.stringify(receiver.received.map((push) => `${push.method} ${push.path}`))}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return pushesTo(path, method).at(-1)!
}

const openCarol = async (page: Page) => {
  await page.getByRole("link", { name: "Users", exact: true }).click()
  await page.waitForSelector("h1:has-text('Users')")
  await expectAccessible(page)
  await page.getByLabel("Name or email contains").fill("CAROL")
  await page.getByRole("button", { name: "Search" }).click()
  await page.waitForSelector("text=1 user, page 1 of 1")
  await page.getByRole("link", { name: "Carol Danvers" }).click()
  await page.waitForSelector("h1:has-text('Carol Danvers')")
  return new URL(page.url()).pathname.split("/").at(-1)!
}

describe("the administrators' pages in a real browser", () => {
  it("an administrator signs in with a code, finds a user, grants a permission, and the application is told", async () => {
    await carolUsesPublisher()
    const page = await signInAsRoot()
    await expectAccessible(page)
    const uid = await openCarol(page)
    await expectAccessible(page)
    const editor = page.getByRole("group", { name: "Publisher" }).getByLabel("editor")
    expect(await editor.isChecked()).toBe(false)
    await editor.check()
    await page.getByRole("button", { name: "Save permissions" }).click()
    await page.waitForSelector("text=Permissions saved")
    await expectAccessible(page)
    expect(await page.getByRole("group", { name: "Publisher" }).getByLabel("editor").isChecked()).toBe(true)
    const push = await waitForPush(`/publisher/users/${uid}`, "PUT", 1)
    expect(push.body).toMatchObject({ user: { uid, permissions: { Publisher: ["editor", "signin"] } } })
    // the event log on the page names who acted
    expect(await page.locator("tr", { hasText: "permissions changed" }).first().textContent()).toContain("root@example.com")
    await page.goto(`${server.url}/`)
    await page.getByRole("link", { name: "Event log" }).click()
    await page.getByLabel("User's email").fill("carol@example.com")
    await page.getByLabel("Kind").fill("permissions changed")
    await page.getByRole("button", { name: "Filter" }).click()
    await page.waitForSelector("td:has-text('permissions changed')")
    await expectAccessible(page)
  })

  it("an administrator suspends a user with a reason, and the application is told to sign them out", async () => {
    const page = await signInAsRoot()
    const uid = await openCarol(page)
    await page.getByLabel("Reason for suspending").fill("Left the organisation")
    await page.getByRole("button", { name: "Suspend" }).click()
    await page.waitForSelector("text=The user is suspended")
    await expectAccessible(page)
    expect(await page.getByText("Suspended: Left the organisation").count()).toBe(1)
    await waitForPush(`/publisher/users/${uid}/reauth`, "POST", 1)
    await page.getByRole("button", { name: "Unsuspend" }).click()
    await page.waitForSelector("text=The user can sign in again")
  })

  it("a user who is not an administrator gets 403 on every administrator's page, and sees no one", async () => {
    const page = await newPage(browser)
    await page.goto(`${server.url}/`)
    await signInWithPassword(page, "bob@example.com", PASSWORD)
    await page.waitForSelector("h1:has-text('Your applications')")
    expect(await page.getByRole("link", { name: "Users", exact: true }).count()).toBe(0)
    const usersPage = await page.goto(`${server.url}/manage/users`)
    expect(usersPage?.status()).toBe(403)
    expect(await page.content()).not.toContain("carol@example.com")
    await expectAccessible(page)
    const admin = await signInAsRoot()
    const uid = await openCarol(admin)
    const adminPages = ["/manage/users/new", "/manage/events", "/manage/applications", "/manage/applications/new", "/manage/api_users"]
    for (const path of [`/manage/users/${uid}`, ...adminPages]) {
      const answer = await page.goto(`${server.url}${path}`)
      expect(answer?.status(), path).toBe(403)
      expect(await page.content()).not.toContain("Carol")
    }
  })

  it("an administrator invites a user, who chooses a password from the emailed link and signs in", async () => {
    const page = await signInAsRoot()
    await page.getByRole("link", { name: "Users", exact: true }).click()
    await page.getByRole("link", { name: "Invite a user" }).click()
    await page.waitForSelector("h1:has-text('Invite a user')")
    await expectAccessible(page)
    await page.getByLabel("Name").fill("Grace Hopper")
    await page.getByLabel("Email address").fill("grace@example.com")
    await page.getByRole("button", { name: "Send the invitation" }).click()
    await page.waitForSelector("h1:has-text('Grace Hopper')")
    await page.waitForSelector("text=The user is invited")
    await expectAccessible(page)

    const [invitation] = await until(emailsTo("grace@example.com"), (found) => found.length === 1, "the invitation")
    const grace = await newPage(browser)
    await grace.goto(linkIn(invitation!.markdown))
    await grace.waitForSelector("h1:has-text('Choose your password')")
    await expectAccessible(grace)
    await choosePassword(grace, NEW_PASSWORD)
    await grace.getByRole("button", { name: "Set my password" }).click()
    await grace.waitForSelector("text=Your password is set")
    await expectAccessible(grace)
    await signInWithPassword(grace, "grace@example.com", NEW_PASSWORD)
    await grace.waitForSelector("h1:has-text('Your applications')")
    await grace.context().close()
  })

  it("a user resets a forgotten password from the emailed link, which then explains that it was used", async () => {
    const page = await newPage(browser)
    await page.goto(`${server.url}/users/sign_in`)
    await page.getByRole("link", { name: "Forgot your password?" }).click()
    await page.waitForSelector("h1:has-text('Reset your password')")
    await expectAccessible(page)
    await page.getByLabel("Email address").fill("bob@example.com")
    await page.getByRole("button", { name: "Send the link" }).click()
    await page.waitForSelector("h1:has-text('Check your email')")
    await expectAccessible(page)

    const [reset] = await until(emailsTo("bob@example.com"), (found) => found.length === 1, "the reset email")
    expect(reset!.subject).toBe("Reset your password")
    await page.goto(linkIn(reset!.markdown))
    await page.waitForSelector("h1:has-text('Choose a new password')")
    await choosePassword(page, NEW_PASSWORD)
    await page.getByRole("button", { name: "Change my password" }).click()
    await page.waitForSelector("text=Your password is set")
    await signInWithPassword(page, "bob@example.com", PASSWORD)
    await page.waitForSelector("text=The email address or password is not right")
    await signInWithPassword(page, "bob@example.com", NEW_PASSWORD)
    await page.waitForSelector("h1:has-text('Your applications')")

    const used = await page.goto(linkIn(reset!.markdown))
    expect(used?.status()).toBe(410)
    await page.waitForSelector("h1:has-text('This link has already been used')")
    await expectAccessible(page)
    await page.context().close()
  })
  it("a superadmin registers an application, sees its credentials once, edits it and rotates its secret", async () => {
    const page = await signInAsRoot()
    await page.getByRole("link", { name: "Applications" }).click()
    await page.waitForSelector("h1:has-text('Applications')")
    await expectAccessible(page)
    await page.getByRole("link", { name: "Register an application" }).click()
    await expectAccessible(page)
    await page.getByLabel("Name", { exact: true }).fill("Newsroom")
    await page.getByLabel("Home address").fill("https://newsroom.example")
    await page.getByLabel("Redirect addresses").fill("https://newsroom.example/auth/callback")
    await page.getByLabel("Permissions").fill("reporter editor")
    await page.getByRole("button", { name: "Save" }).click()
    await page.waitForSelector("h1:has-text('Credentials of Newsroom')")
    await expectAccessible(page)
    const [clientId, firstSecret] = await page.locator("dd code").allTextContents()
    expect(clientId).toMatch(/^[0-9a-f]{32}$/)
    expect(await introspectWith(clientId!, firstSecret!)).toBe(200)

    await page.getByRole("link", { name: "Back to Newsroom" }).click()
    await page.getByLabel("Require two-step verification of its users").check()
    await page.getByRole("button", { name: "Save" }).click()
    await page.waitForSelector("text=Saved.")
    expect(await page.getByLabel("Require two-step verification of its users").isChecked()).toBe(true)
    await page.getByRole("button", { name: "Make a new client secret" }).click()
    await page.waitForSelector("h1:has-text('Credentials of Newsroom')")
    const [secondSecret] = await page.locator("dd code").allTextContents()
    expect(secondSecret).not.toBe(firstSecret)
    expect(await introspectWith(clientId!, secondSecret!)).toBe(200)
    expect(await introspectWith(clientId!, firstSecret!)).toBe(401)
  })
})

/** Whether Publisher's introspection of `token` finds it active. */
const activeForPublisher = async (token: string) => {
  const response = await fetch(`${server.url}/oauth/introspect`, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      authorization: `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString("base64")}`
    },
    body: new URLSearchParams({ token })
  })
  return ((await response.json()) as { active: boolean }).active
}

describe("the API users' pages in a real browser", () => {
  it("a superadmin creates an API user, issues a token shown once, and revokes it", async () => {
    const page = await signInAsRoot()
    await page.getByRole("link", { name: "API users" }).click()
    await page.waitForSelector("h1:has-text('API users')")
    await expectAccessible(page)
    await page.getByLabel("Name").fill("Search bot")
    await page.getByLabel("Email address").fill("search-bot@example.com")
    await page.getByRole("button", { name: "Create API user" }).click()
    await page.waitForSelector("h1:has-text('Search bot')")
    await expectAccessible(page)
    await page.getByLabel("Application").selectOption("Publisher")
    await page.getByLabel("Valid for (days)").fill("30")
    await page.getByRole("button", { name: "Issue token" }).click()
    await page.waitForSelector("text=It is shown only now")
    await expectAccessible(page)
    const token = (await page.locator(".notice code").textContent())!
    expect(token).toMatch(/^[0-9a-f]{32}$/)
    expect(await activeForPublisher(token)).toBe(true)
    await page.getByRole("button", { name: /Revoke the token for Publisher/ }).click()
    await page.waitForSelector("text=The token is revoked")
    expect(await page.locator("td", { hasText: "revoked" }).count()).toBe(1)
    expect(await activeForPublisher(token)).toBe(false)
  })
})

/** The status of an introspection authenticated with these client credentials. */
const introspectWith = async (clientId: string, clientSecret: string) =>
  (await fetch(`${server.url}/oauth/introspect`, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString("base64")}`
    },
    body: new URLSearchParams({ token: "0".repeat(32) })
  })).status
