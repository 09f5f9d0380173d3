import { Effect } from "effect"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { totpCode } from "../../src/domain/twoStep"
import { Directory } from "../../src/services/Directory"
import { formToken, makeBrowser } from "../fixtures/browser"
import { CLIENT_ID, CLIENT_SECRET, PASSWORD, REDIRECT_URI } from "../fixtures/publisherFlow"
import { startSsoHost } from "./server"
import type { SsoHost } from "./server"

const ROOT_SECRET = "ONSWG4TFORXW64TPN5ZGKYLEMVZHI2LD"
const ALAN_SECRET = "MFWGC3RAMFWGC3RAMFWGC3RAMFWGC3RA"
const ACTIONS = ["permissions", "suspend", "unsuspend", "unlock", "reset_2sv"]

let server: SsoHost
let carolUid: string
let publisherId: string

beforeAll(async () => {
  server = await startSsoHost({
    bootstrap: {
      applications: [{
        name: "Publisher",
        home_uri: "https://publisher.example",
        redirect_uris: [REDIRECT_URI],
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        permissions: ["signin", "editor"]
      }, {
        name: "Sandbox",
        home_uri: "https://sandbox.example",
        redirect_uris: ["https://sandbox.example/callback"]
      }],
      users: [
        { email: "root@example.com", name: "Root", password: PASSWORD, admin: true, otp_secret: ROOT_SECRET },
        { email: "carol@example.com", name: "Carol", password: PASSWORD, permissions: { Publisher: ["signin"] } },
        { email: "bob@example.com", name: "Bob", password: PASSWORD },
        { email: "alan@example.com", name: "Alan", password: PASSWORD, role: "admin", otp_secret: ALAN_SECRET }
      ]
    }
  })
  carolUid = (await server.run(Effect.flatMap(Directory, (directory) => directory.userByEmail("carol@example.com")))).user.uid
  publisherId = (await server.run(Effect.flatMap(Directory, (directory) => directory.application("Publisher")))).id
})
afterAll(() => server?.close())

const carol = () => server.run(Effect.flatMap(Directory, (directory) => directory.user(carolUid)))

const browsers = new Map<string, ReturnType<typeof makeBrowser>>()

/**
 * A browser signed in as `email`, with the code of `secret` when the account has two-step verification; one per
 * account for the whole file, since each code works once.
 */
const signedIn = async (email: string, secret?: string) => {
  const known = browsers.get(email)
  if (known !== undefined) return known
  const browser = makeBrowser(server.url)
  const code = secret === undefined ? undefined : totpCode(secret, Date.now())
  const page = await browser.get("/users/sign_in")
  let response = await browser.postForm("/users/sign_in", { authenticity_token: formToken(await page.text()), email, password: PASSWORD })
  if (code !== undefined) {
    const codePage = await browser.get(response.headers.get("location")!)
    response = await browser.postForm("/users/two_step", { authenticity_token: formToken(await codePage.text()), code })
  }
  expect(response.headers.get("location")).toBe("/")
  browsers.set(email, browser)
  return browser
}

describe("the administrators' pages over HTTP", () => {
  it("refuse forms without the session's CSRF token, and anyone but an administrator, changing nothing", async () => {
    const root = await signedIn("root@example.com", ROOT_SECRET)
    const bob = await signedIn("bob@example.com")
    const bobsToken = formToken(await (await bob.get("/")).text())
    const before = await carol()
    for (const action of ACTIONS) {
      const fields = { reason: "no reason", [`grant.${publisherId}.editor`]: "on" }
      const forged = await root.postForm(`/manage/users/${carolUid}/${action}`, { ...fields, authenticity_token: "0".repeat(32) })
      expect(forged.status, action).toBe(403)
      const byBob = await bob.postForm(`/manage/users/${carolUid}/${action}`, { ...fields, authenticity_token: bobsToken })
      expect(byBob.status, action).toBe(403)
      expect(await byBob.text()).not.toContain("carol@example.com")
    }
    expect(await carol()).toEqual(before)
    const signedOut = await makeBrowser(server.url).get(`/manage/users/${carolUid}`)
    expect(signedOut.status).toBe(303)
    expect(signedOut.headers.get("location")).toMatch(/^\/users\/sign_in\?return_to=/)
  })

  it("hostile values in every form and path get a page, never a server error", async () => {
    const root = await signedIn("root@example.com", ROOT_SECRET)
    const sandboxId = (await server.run(Effect.flatMap(Directory, (directory) => directory.application("Sandbox")))).id
    const token = formToken(await (await root.get(`/manage/users/${carolUid}`)).text())
    const value = fc.oneof(fc.string(), fc.string({ unit: "binary" }), fc.constantFrom(token, "on", "", "%00", "\u0000", "x".repeat(10_000)))
    const field = fc.constantFrom(
      "authenticity_token",
      "reason",
      `grant.${publisherId}.editor`,
      `grant.${publisherId}.signin`,
      `grant.${publisherId}.`,
      "grant..",
      "__proto__",
      "constructor",
      "return_to"
    )
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ACTIONS),
        fc.constantFrom(carolUid, "nobody", "%00", "..%2F..%2Fadmin", "x".repeat(300)),
        fc.dictionary(field, value),
        async (action, uid, fields) => {
          const response = await root.postForm(`/manage/users/${uid}/${action}`, fields)
          expect(response.status, `${action} ${JSON.stringify(fields).slice(0, 200)}`).toBeLessThan(500)
        }
      ),
      { numRuns: 80 }
    )
    const applicationField = fc.constantFrom(
      "authenticity_token", "name", "description", "home_uri", "redirect_uris", "permissions", "push_updates", "push_format",
      "require_pkce", "require_2sv", "__proto__", "email", "application", "expires_in_days"
    )
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(
          "/manage/applications",
          `/manage/applications/${sandboxId}`,
          `/manage/applications/${sandboxId}/rotate_secret`,
          "/manage/applications/%00",
          "/manage/api_users",
          `/manage/api_users/${carolUid}/tokens`,
          "/manage/api_users/%00/tokens",
          `/manage/api_users/${carolUid}/tokens/%00/revoke`
        ),
        fc.dictionary(applicationField, value),
        async (path, fields) => {
          const response = await root.postForm(path, fields)
          expect(response.status, `${path} ${JSON.stringify(fields).slice(0, 200)}`).toBeLessThan(500)
        }
      ),
      { numRuns: 60 }
    )
    for (const query of ["user=%00", "kind=%00", "from=2026-02-30", "to=yesterday", "from=%FF", `user=${"x".repeat(5000)}`]) {
      expect((await root.get(`/manage/events?${query}`)).status, query).toBeLessThan(500)
    }
    for (const query of ["q=%00", "page=-1", "page=1e99", "role=%FF", `q=${"x".repeat(5000)}`, "two_step=on&state=locked"]) {
      expect((await root.get(`/manage/users?${query}`)).status, query).toBe(200)
    }
  })
  it("an admin who is not a superadmin manages users but not roles or administrators", async () => {
    const alan = await signedIn("alan@example.com", ALAN_SECRET)
    const carolsPage = await (await alan.get(`/manage/users/${carolUid}`)).text()
    expect(carolsPage).toContain("<legend>Publisher</legend>")
    expect(carolsPage).not.toContain("<legend>sso</legend>")
    const rootUid = (await server.run(Effect.flatMap(Directory, (directory) => directory.userByEmail("root@example.com")))).user.uid
    const refused = await alan.postForm(`/manage/users/${rootUid}/suspend`, { authenticity_token: formToken(carolsPage), reason: "coup" })
    expect(refused.status).toBe(403)
    expect(await refused.text()).toContain("Only a superadmin can change an administrator")
    const root = await server.run(Effect.flatMap(Directory, (directory) => directory.user(rootUid)))
    expect(root.user.suspendedAt).toBeNull()
    // a forged grant of a role on the sign-on is ignored: the form of an admin has no such boxes
    const ssoId = (await server.run(Effect.flatMap(Directory, (directory) => directory.application("sso")))).id
    const grant = await alan.postForm(`/manage/users/${carolUid}/permissions`, {
      authenticity_token: formToken(carolsPage),
      [`grant.${ssoId}.admin`]: "on",
      [`grant.${publisherId}.signin`]: "on"
    })
    expect(grant.status).toBe(303)
    expect((await carol()).permissions["sso"]).toBeUndefined()
  })
  it("the application pages are for superadmins; bad input is shown again naming the problem, and built-in names stay", async () => {
    const alan = await signedIn("alan@example.com", ALAN_SECRET)
    expect((await alan.get("/manage/applications")).status).toBe(403)
    expect((await alan.get("/manage/api_users")).status).toBe(403)
    const alansToken = formToken(await (await alan.get("/")).text())
    const byAlan = await alan.postForm("/manage/applications", { authenticity_token: alansToken, name: "Rogue", home_uri: "https://rogue.example" })
    expect(byAlan.status).toBe(403)

    const root = await signedIn("root@example.com", ROOT_SECRET)
    const token = formToken(await (await root.get("/manage/applications/new")).text())
    const bad = await root.postForm("/manage/applications", { authenticity_token: token, name: "Broken", home_uri: "not a url" })
    expect(bad.status).toBe(400)
    const html = await bad.text()
    expect(html).toContain("The home_uri")
    expect(html).toContain('value="Broken"')
    const applications = () => server.run(Effect.flatMap(Directory, (directory) => directory.applications))
    expect((await applications()).map((application) => application.name)).not.toContain("Broken")
    const alerts = (await applications()).find((application) => application.name === "email-alert-api")!
    const renamed = await root.postForm(`/manage/applications/${alerts.id}`, {
      authenticity_token: token,
      name: "renamed",
      home_uri: alerts.homeUri
    })
    expect(renamed.status).toBe(403)
    expect(await renamed.text()).toContain("keeps its name")
    expect((await root.get("/manage/applications/nope")).status).toBe(404)
  })
  it("the event log filters by user, kind and date and names who acted", async () => {
    const root = await signedIn("root@example.com", ROOT_SECRET)
    const today = new Date().toISOString().slice(0, 10)
    const log = await root.get(`/manage/events?user=carol%40example.com&kind=user+created&from=${today}&to=${today}`)
    expect(log.status).toBe(200)
    const html = await log.text()
    expect(html).toContain("<td>user created</td>")
    expect(html).toContain("<td>carol@example.com</td>")
    expect(html).toContain("<td>bootstrap</td>")
    expect(html).not.toContain("<td>bob@example.com</td>")
    const bad = await root.get("/manage/events?from=28/11/2026")
    expect(bad.status).toBe(400)
    expect(await bad.text()).toContain("YYYY-MM-DD")
    const bob = await signedIn("bob@example.com")
    expect((await bob.get("/manage/events")).status).toBe(403)
  })
})
