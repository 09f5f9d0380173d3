import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Directory } from "../../src/services/Directory"
import { formToken, makeBrowser } from "../fixtures/browser"
import { PASSWORD } from "../fixtures/publisherFlow"
import { startSsoHost } from "./server"
import type { SsoHost } from "./server"

let server: SsoHost

beforeAll(async () => {
  server = await startSsoHost({
    bootstrap: {
      users: ["gina", "hal"].map((name) => ({ email: `${name}@example.com`, name, password: PASSWORD }))
    }
  })
})
afterAll(() => server?.close())

const signedIn = async (email: string, password = PASSWORD) => {
  const browser = makeBrowser(server.url)
  const page = await browser.get("/users/sign_in")
  const response = await browser.postForm("/users/sign_in", { authenticity_token: formToken(await page.text()), email, password })
  return { browser, ok: response.headers.get("location") === "/" }
}

const changePassword = async (browser: ReturnType<typeof makeBrowser>, fields: Record<string, string>, token?: string) => {
  const csrf = token ?? formToken(await (await browser.get("/account")).text())
  return browser.postForm("/account/password", { authenticity_token: csrf, ...fields })
}

describe("the account page", () => {
  it("changes the password with the current one, keeping this session and ending the others", async () => {
    const here = await signedIn("gina@example.com")
    const elsewhere = await signedIn("gina@example.com")
    const account = await (await here.browser.get("/account")).text()
    expect(account).toContain("Recent sign-ins")
    expect(account).toContain("127.0.0.1")
    const changed = await changePassword(here.browser, {
      current_password: PASSWORD,
      new_password: "a brand new password",
      confirm_password: "a brand new password"
    })
    expect(changed.status).toBe(303)
    expect(changed.headers.get("location")).toBe("/account?done=password")
    expect(await (await here.browser.get("/account?done=password")).text()).toContain("Your password is changed")
    expect((await elsewhere.browser.get("/account")).status).toBe(303)
    expect((await signedIn("gina@example.com")).ok).toBe(false)
    expect((await signedIn("gina@example.com", "a brand new password")).ok).toBe(true)
    const events = await server.run(Effect.flatMap(Directory, (directory) =>
      Effect.flatMap(directory.userByEmail("gina@example.com"), ({ user }) => directory.events({ userUid: user.uid }))))
    expect(events.find((event) => event.kind === "password_changed")?.detail["actor"]).toMatchObject({ kind: "user", email: "gina@example.com" })
  })

  it("refuses a wrong current password, a mismatch, a short password and a forged form, changing nothing", async () => {
    const { browser } = await signedIn("hal@example.com")
    const cases: Array<[Record<string, string>, number, string]> = [
      [{ current_password: "not it at all", new_password: "another good one", confirm_password: "another good one" }, 401, "Your current password is not right"],
      [{ current_password: PASSWORD, new_password: "another good one", confirm_password: "another good two" }, 400, "the same both times"],
      [{ current_password: PASSWORD, new_password: "short", confirm_password: "short" }, 400, "at least 10 characters"],
      [{ current_password: PASSWORD }, 400, "Enter your current password"]
    ]
    for (const [fields, status, problem] of cases) {
      const response = await changePassword(browser, fields)
      expect(response.status, JSON.stringify(fields)).toBe(status)
      expect(await response.text()).toContain(problem)
    }
    const forged = await changePassword(browser, { current_password: PASSWORD, new_password: "another good one", confirm_password: "another good one" }, "0".repeat(32))
    expect(forged.status).toBe(403)
    expect((await signedIn("hal@example.com")).ok).toBe(true)
  })

  it("wrong current passwords are throttled as sign-ins are: a session alone cannot guess the password", async () => {
    const { browser } = await signedIn("hal@example.com")
    const statuses: Array<number> = []
    for (let attempt = 0; attempt < 6; attempt++) {
      const wrong = await changePassword(browser, { current_password: `guess ${attempt}`, new_password: "another good one", confirm_password: "another good one" })
      statuses.push(wrong.status)
    }
    expect(statuses.slice(0, 4)).toEqual([401, 401, 401, 401])
    expect(statuses.at(-1)).toBe(429)
  })
})
