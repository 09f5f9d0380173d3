import { Effect } from "effect"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { totpCode } from "../../src/domain/twoStep"
import { Directory } from "../../src/services/Directory"
import { MemoryOutbox } from "../../src/services/Mailer"
import { formToken, makeBrowser } from "../fixtures/browser"
import { PASSWORD } from "../fixtures/publisherFlow"
import { startSsoHost } from "./server"
import type { SsoHost } from "./server"

const ROOT_SECRET = "ONSWG4TFORXW64TPN5ZGKYLEMVZHI2LD"
const NEW_PASSWORD = "a brand new passphrase"

let server: SsoHost

beforeAll(async () => {
  server = await startSsoHost({
    workers: true,
    issuerIsHost: true,
    bootstrap: {
      users: [
        { email: "root@example.com", name: "Root", password: PASSWORD, admin: true, otp_secret: ROOT_SECRET },
        { email: "carol@example.com", name: "Carol", password: PASSWORD },
        { email: "bob@example.com", name: "Bob", password: PASSWORD }
      ]
    }
  })
})
afterAll(() => server?.close())

const outbox = () => server.run(Effect.flatMap(MemoryOutbox, (mailbox) => mailbox.sent))

/** The emails to `address` once there are `count` of them (the workers poll every second). */
const emailsTo = async (address: string, count: number) => {
  for (let waited = 0; waited < 100; waited++) {
    const found = (await outbox()).filter((message) => message.to === address)
    if (found.length >= count) return found
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`no ${count} emails to ${address}`)
}

/** The path and query of the link in an email. */
const linkIn = (body: string) => {
  const url = new URL(/\((http:\/\/[^)]+)\)/.exec(body)![1]!)
  expect(url.origin).toBe(server.url)
  return `${url.pathname}${url.search}`
}

const userCount = () => server.run(Effect.map(Effect.flatMap(Directory, (directory) => directory.users), (users) => users.length))

const signInStatus = async (email: string, password: string) => {
  const browser = makeBrowser(server.url)
  const page = await browser.get("/users/sign_in")
  const response = await browser.postForm("/users/sign_in", { authenticity_token: formToken(await page.text()), email, password })
  return response.status
}

const askForReset = async (email: string) => {
  const browser = makeBrowser(server.url)
  const page = await browser.get("/users/password/new")
  expect(page.status).toBe(200)
  return browser.postForm("/users/password", { authenticity_token: formToken(await page.text()), email })
}

let rootBrowser: ReturnType<typeof makeBrowser> | undefined

const signedInRoot = async () => {
  if (rootBrowser !== undefined) return rootBrowser
  const browser = makeBrowser(server.url)
  const page = await browser.get("/users/sign_in")
  await browser.postForm("/users/sign_in", { authenticity_token: formToken(await page.text()), email: "root@example.com", password: PASSWORD })
  const codePage = await browser.get("/users/two_step")
  const done = await browser.postForm("/users/two_step", { authenticity_token: formToken(await codePage.text()), code: totpCode(ROOT_SECRET, Date.now()) })
  expect(done.headers.get("location")).toBe("/")
  rootBrowser = browser
  return browser
}

describe("invitations and password resets over HTTP", () => {
  it("'Forgot your password?' answers alike for any address; the link sets a new password once, then explains itself", async () => {
    const signInPage = await (await makeBrowser(server.url).get("/users/sign_in")).text()
    expect(signInPage).toContain(`href="/users/password/new"`)
    const forUser = await askForReset("carol@example.com")
    const forNobody = await askForReset("nobody@example.com")
    expect([forUser.status, forNobody.status]).toEqual([200, 200])
    expect(await forUser.text()).toBe(await forNobody.text())
    const [email] = await emailsTo("carol@example.com", 1)
    expect((await outbox()).map((message) => message.to)).not.toContain("nobody@example.com")

    const browser = makeBrowser(server.url)
    const link = linkIn(email!.body)
    const page = await browser.get(link)
    expect(page.status).toBe(200)
    const html = await page.text()
    expect(html).toContain("Choose a new password")
    expect(page.headers.get("referrer-policy")).toBe("no-referrer")
    const token = new URL(link, server.url).searchParams.get("token")!
    const post = (fields: Record<string, string>) =>
      browser.postForm("/users/password/edit", { authenticity_token: formToken(html), token, ...fields })
    expect((await post({ new_password: NEW_PASSWORD, confirm_password: "something else" })).status).toBe(400)
    const short = await post({ new_password: "short", confirm_password: "short" })
    expect(short.status).toBe(400)
    expect(await short.text()).toContain("at least 10 characters")
    const forged = await browser.postForm("/users/password/edit", {
      authenticity_token: "0".repeat(32),
      token,
      new_password: NEW_PASSWORD,
      confirm_password: NEW_PASSWORD
    })
    expect(forged.status).toBe(403)
    expect(await signInStatus("carol@example.com", PASSWORD)).toBe(303)

    const set = await post({ new_password: NEW_PASSWORD, confirm_password: NEW_PASSWORD })
    expect(set.status).toBe(303)
    expect(set.headers.get("location")).toBe("/users/sign_in?done=password_set")
    expect(await (await browser.get("/users/sign_in?done=password_set")).text()).toContain("Your password is set")
    expect(await signInStatus("carol@example.com", PASSWORD)).toBe(401)
    expect(await signInStatus("carol@example.com", NEW_PASSWORD)).toBe(303)

    const again = await browser.get(link)
    expect(again.status).toBe(410)
    expect(await again.text()).toContain("This link has already been used")
    const replayed = await post({ new_password: "the attacker's own choice", confirm_password: "the attacker's own choice" })
    expect(replayed.status).toBe(410)
    expect(await signInStatus("carol@example.com", NEW_PASSWORD)).toBe(303)
    const unknown = await browser.get(`/users/password/edit?token=${"0".repeat(32)}`)
    expect(unknown.status).toBe(404)
    expect(await unknown.text()).toContain("This link does not work")
  })

  it("a reset asked without the form's token, or for a bad address, is refused and sends nothing", async () => {
    const browser = makeBrowser(server.url)
    const before = (await outbox()).length
    expect((await browser.postForm("/users/password", { authenticity_token: "0".repeat(32), email: "bob@example.com" })).status).toBe(403)
    const bad = await askForReset("not an address")
    expect(bad.status).toBe(400)
    expect(await bad.text()).toContain("Enter an email address")
    await new Promise((resolve) => setTimeout(resolve, 1500))
    expect((await outbox()).length).toBe(before)
  })

  it("administrators invite: the invited user chooses a password from the email and signs in; others get 403", async () => {
    const bob = makeBrowser(server.url)
    const bobsPage = await bob.get("/users/sign_in")
    await bob.postForm("/users/sign_in", { authenticity_token: formToken(await bobsPage.text()), email: "bob@example.com", password: PASSWORD })
    const bobsHome = await (await bob.get("/")).text()
    expect((await bob.get("/manage/users/new")).status).toBe(403)
    const users = await userCount()
    expect((await bob.postForm("/manage/users", { authenticity_token: formToken(bobsHome), name: "Mallory", email: "m@example.com" })).status)
      .toBe(403)

    const root = await signedInRoot()
    const form = await root.get("/manage/users/new")
    expect(form.status).toBe(200)
    const token = formToken(await form.text())
    expect((await root.postForm("/manage/users", { authenticity_token: "0".repeat(32), name: "Grace", email: "grace@example.com" })).status)
      .toBe(403)
    const bad = await root.postForm("/manage/users", { authenticity_token: token, name: "Grace", email: "grace" })
    expect(bad.status).toBe(400)
    expect(await bad.text()).toContain("The email must be an email address")
    const taken = await root.postForm("/manage/users", { authenticity_token: token, name: "Carol again", email: "CAROL@example.com" })
    expect(taken.status).toBe(409)
    expect(await userCount()).toBe(users)

    const invited = await root.postForm("/manage/users", { authenticity_token: token, name: "Grace", email: "grace@example.com" })
    expect(invited.status).toBe(303)
    const userPath = invited.headers.get("location")!
    expect(userPath).toMatch(/^\/manage\/users\/[0-9a-f-]+\?done=invited$/)
    const userPage = await (await root.get(userPath)).text()
    expect(userPage).toContain("The user is invited")
    expect(userPage).toContain("Send the invitation again")
    expect(await (await root.get("/manage/users?state=invited")).text()).toContain("grace@example.com")
    const [invitation] = await emailsTo("grace@example.com", 1)
    expect(invitation!.subject).toBe("You are invited to sign in")
    const resent = await root.postForm(`${userPath.split("?")[0]}/resend_invitation`, { authenticity_token: token })
    expect(resent.headers.get("location")).toMatch(/\?done=invitation_sent$/)
    const [, second] = await emailsTo("grace@example.com", 2)

    const grace = makeBrowser(server.url)
    const page = await grace.get(linkIn(second!.body))
    const html = await page.text()
    expect(html).toContain("Choose your password")
    const link = new URL(linkIn(second!.body), server.url).searchParams.get("token")!
    const set = await grace.postForm("/users/password/edit", {
      authenticity_token: formToken(html),
      token: link,
      new_password: NEW_PASSWORD,
      confirm_password: NEW_PASSWORD
    })
    expect(set.status).toBe(303)
    expect(await signInStatus("grace@example.com", NEW_PASSWORD)).toBe(303)
    expect(await (await root.get("/manage/users?state=invited")).text()).not.toContain("grace@example.com")
    // the first invitation's link ended when she chose her password
    expect((await grace.get(linkIn(invitation!.body))).status).toBe(410)
    const afterwards = await root.postForm(`${userPath.split("?")[0]}/resend_invitation`, { authenticity_token: token })
    expect(afterwards.status).toBe(400)
  })

  it("hostile values in the forms get a page, never a server error, and a refused form changes nothing", async () => {
    const root = await signedInRoot()
    const rootToken = formToken(await (await root.get("/manage/users/new")).text())
    const visitor = makeBrowser(server.url)
    const visitorToken = formToken(await (await visitor.get("/users/password/new")).text())
    const value = fc.oneof(
      fc.string(),
      fc.string({ unit: "binary" }),
      fc.constantFrom(rootToken, visitorToken, "", "%00", "\u0000", "\ud800", "x".repeat(10_000), "0".repeat(32), "a@b")
    )
    const field = fc.constantFrom("authenticity_token", "email", "name", "token", "new_password", "confirm_password")
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(
          { browser: visitor, path: "/users/password" },
          { browser: visitor, path: "/users/password/edit" },
          { browser: root, path: "/manage/users" }
        ),
        fc.dictionary(field, value),
        async ({ browser, path }, fields) => {
          const users = await userCount()
          const response = await browser.postForm(path, fields)
          expect(response.status).toBeLessThan(500)
          if (response.status >= 400) expect(await userCount()).toBe(users)
        }
      ),
      { numRuns: 60 }
    )
    for (const path of ["/users/password/edit?token=%00", "/users/password/edit?token=%ZZ", `/users/password/edit?token=${"x".repeat(5000)}`]) {
      expect((await visitor.get(path)).status).toBeLessThan(500)
    }
  })
})
