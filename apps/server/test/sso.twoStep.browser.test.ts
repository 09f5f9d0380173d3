import jsQR from "jsqr"
import { PNG } from "pngjs"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startInProcessServer } from "./inProcessServer"
import type { InProcessServer } from "./inProcessServer"
import { writeBootstrap } from "./sso/bootstrap"
import { authenticatorCode } from "./sso/authenticatorApp"
import { expectAccessible } from "./sso/axe"
import { launchChromium } from "./sso/chromium"
import { authorizeUrl, newPage, signInWithPassword, startClientApp } from "./sso/pages"

const CLIENT_ID = "5555555555555555eeeeeeeeeeeeeeee"
const PASSWORD = "a password for two steps"
const GIVEN_SECRET = "KRUGS4ZANFZSAYJAORSXG5BAONSWG4TF"

let server: InProcessServer
let browser: Browser
let clientApp: Awaited<ReturnType<typeof startClientApp>>
let bootstrap: Awaited<ReturnType<typeof writeBootstrap>>

beforeAll(async () => {
  clientApp = await startClientApp()
  const user = (email: string, extra: Record<string, unknown> = {}) => ({
    email,
    name: email.split("@")[0],
    password: PASSWORD,
    permissions: { Publisher: ["signin"] },
    ...extra
  })
  bootstrap = await writeBootstrap({
    applications: [{
      name: "Publisher",
      home_uri: "https://publisher.example",
      redirect_uris: [clientApp.callbackUrl],
      client_id: CLIENT_ID,
      client_secret: "6666666666666666ffffffffffffffff"
    }],
    users: [
      user("erin@example.com"),
      user("dora@example.com", { otp_secret: GIVEN_SECRET }),
      user("frank@example.com", { otp_secret: GIVEN_SECRET }),
      user("root@example.com", { admin: true })
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

/** What an authenticator app shows for `secret` now, `offsetSteps` steps of 30 seconds away. */
const appCode = (secret: string, offsetSteps = 0) => authenticatorCode(secret, Date.now() + offsetSteps * 30_000)

const startAtPublisher = async (email: string) => {
  const page = await newPage(browser)
  await page.goto(authorizeUrl(server.url, CLIENT_ID, clientApp.callbackUrl))
  await signInWithPassword(page, email, PASSWORD)
  return page
}

const enterCode = async (page: Page, code: string) => {
  await page.getByLabel(/Code from your authenticator app|Recovery code/).fill(code)
  await page.getByRole("button", { name: /Continue|Turn on two-step verification/ }).click()
}

const expectBackAtPublisher = async (page: Page) => {
  await page.waitForURL((url) => url.href.startsWith(clientApp.callbackUrl))
  expect(new URL(page.url()).searchParams.get("code")).toMatch(/^[0-9a-f]{32}$/)
}

/** Reads the set-up page's QR code from a screenshot, as a phone's camera would: the `otpauth://` URI in it. */
const scanQrCode = async (page: Page) => {
  const image = PNG.sync.read(await page.locator(".qr").screenshot())
  const found = jsQR(new Uint8ClampedArray(image.data), image.width, image.height)
  if (found === null) throw new Error("the QR code could not be read")
  return new URL(found.data)
}

/** The set-up: scans the QR code, checks the key shown as text is the same, enters the app's code. */
const setUpWithQrCode = async (page: Page, email: string) => {
  await page.waitForSelector("h1:has-text('Set up two-step verification')")
  await expectAccessible(page)
  const uri = await scanQrCode(page)
  expect(uri.protocol).toBe("otpauth:")
  expect(decodeURIComponent(uri.pathname)).toContain(email)
  const secret = uri.searchParams.get("secret")!
  expect((await page.locator("code.secret").textContent())!.replaceAll(" ", "")).toBe(secret)
  await enterCode(page, appCode(secret))
  await page.waitForSelector("h2:has-text('Save your recovery codes')")
  await expectAccessible(page)
  const recoveryCodes = await page.locator("ul.codes code").allTextContents()
  expect(recoveryCodes).toHaveLength(10)
  return { secret, recoveryCodes }
}

describe("two-step verification in a real browser", () => {
  it("is set up from the account page with the QR code; a recovery code then signs in once", async () => {
    const page = await newPage(browser)
    await page.goto(`${server.url}/users/sign_in`)
    await signInWithPassword(page, "erin@example.com", PASSWORD)
    await page.getByRole("link", { name: "Your account and two-step verification" }).click()
    await page.waitForSelector("text=Two-step verification is off")
    await expectAccessible(page)
    await page.getByRole("link", { name: "Set up two-step verification" }).click()
    // a wrong code first: the same secret is shown again with the problem
    await page.waitForSelector(".qr svg")
    const shownFirst = await page.locator("code.secret").textContent()
    await enterCode(page, "000000")
    await page.waitForSelector("[role=alert]")
    await expectAccessible(page)
    expect(await page.locator("code.secret").textContent()).toBe(shownFirst)
    const { recoveryCodes } = await setUpWithQrCode(page, "erin@example.com")
    await page.getByRole("link", { name: /continue/ }).click()
    await page.waitForSelector("text=Two-step verification is on")
    await page.getByRole("button", { name: "Sign out" }).click()

    const next = await startAtPublisher("erin@example.com")
    await next.waitForSelector("h1:has-text('Enter your code')")
    await next.getByRole("link", { name: "Use a recovery code instead" }).click()
    await next.waitForSelector("h1:has-text('Use a recovery code')")
    await expectAccessible(next)
    await enterCode(next, recoveryCodes[0]!)
    await expectBackAtPublisher(next)

    const replay = await startAtPublisher("erin@example.com")
    await replay.getByRole("link", { name: "Use a recovery code instead" }).click()
    await enterCode(replay, recoveryCodes[0]!)
    await replay.waitForSelector("text=That code is not right, or it has been used already")
  })

  it("signs in with the code from the app; the code field is the one-time-code kind", async () => {
    const page = await startAtPublisher("dora@example.com")
    await page.waitForSelector("h1:has-text('Enter your code')")
    await expectAccessible(page)
    expect(await page.getByLabel("Code from your authenticator app").getAttribute("autocomplete")).toBe("one-time-code")
    await enterCode(page, appCode(GIVEN_SECRET))
    await expectBackAtPublisher(page)
  })

  it("refuses a wrong code and a replayed one, naming the problem; the next code works", async () => {
    const first = await startAtPublisher("frank@example.com")
    await enterCode(first, "123456" === appCode(GIVEN_SECRET) ? "654321" : "123456")
    await first.waitForSelector("[role=alert]:has-text('That code is not right')")
    await expectAccessible(first)
    const code = appCode(GIVEN_SECRET)
    await enterCode(first, code)
    await expectBackAtPublisher(first)

    const second = await startAtPublisher("frank@example.com")
    await enterCode(second, code)
    await second.waitForSelector("[role=alert]:has-text('used already')")
    // the app's next code (a clock a step ahead is forgiven) completes the sign-in
    await enterCode(second, appCode(GIVEN_SECRET, 1))
    await expectBackAtPublisher(second)
  })

  it("an administrator without it is taken to the set-up and gets no code until it is done", async () => {
    const page = await startAtPublisher("root@example.com")
    await page.waitForURL((url) => url.pathname === "/account/two_step")
    expect(await page.getByText("Your account must use two-step verification").count()).toBe(1)
    // going straight back to the application's request leads to the set-up again
    await page.goto(authorizeUrl(server.url, CLIENT_ID, clientApp.callbackUrl))
    expect(new URL(page.url()).pathname).toBe("/account/two_step")
    await setUpWithQrCode(page, "root@example.com")
    await page.getByRole("link", { name: /continue/ }).click()
    await expectBackAtPublisher(page)
  })

  it("works without JavaScript", async () => {
    const context = await browser.newContext({ javaScriptEnabled: false })
    const page = await context.newPage()
    await page.goto(authorizeUrl(server.url, CLIENT_ID, clientApp.callbackUrl))
    await signInWithPassword(page, "dora@example.com", PASSWORD)
    await enterCode(page, appCode(GIVEN_SECRET, 1))
    await expectBackAtPublisher(page)
    await context.close()
  })
})
