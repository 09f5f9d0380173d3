import { Directory } from "@civicstack/core-sso"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { PASSWORD, type RealSso, startRealSso, unique } from "../../../packages/sdk-sso/test/support/realSso"
import { type RunningClientApp, startClientApp } from "../src/clientApp"

const USER_NAME = `Grace "Amazing" <Hopper> & Co`
const USER_NAME_IN_HTML = "Grace &quot;Amazing&quot; &lt;Hopper&gt; &amp; Co"

let sso: RealSso
let app: RunningClientApp
let applicationName: string

/** Starts an example app and registers it at the SSO under a new name. */
const registeredApp = async (
  options: { readonly pushUpdates: boolean; readonly now?: () => number; readonly sessionIdleTimeoutMs?: number }
) => {
  const name = unique("Example app")
  // The app's port is known only once it listens, so its credentials are chosen here and registered after.
  const clientId = randomBytes(16).toString("hex")
  const clientSecret = randomBytes(16).toString("hex")
  const { pushUpdates, ...timing } = options
  const started = await startClientApp({ ssoUrl: sso.url, clientId, clientSecret, applicationName: name, host: "127.0.0.1", ...timing })
  await sso.run(Effect.flatMap(Directory, (directory) =>
    directory.createApplication({
      name,
      homeUri: started.publicUrl,
      redirectUris: [`${started.publicUrl}/auth/callback`],
      permissions: ["editor"],
      pushUpdates,
      pushFormat: "seed",
      clientId,
      clientSecret
    })))
  return { app: started, name }
}

beforeAll(async () => {
  sso = await startRealSso()
  ;({ app, name: applicationName } = await registeredApp({ pushUpdates: true }))
})
afterAll(async () => {
  await app?.close()
  await sso?.close()
})

/** A user with `signin` on the example app. */
const newUser = async (onApplication = applicationName) => {
  const email = `${unique("user")}@example.com`
  const created = await sso.run(Effect.gen(function*() {
    const directory = yield* Directory
    const user = yield* directory.createUser({ email, name: USER_NAME, password: PASSWORD })
    yield* directory.setPermissions(user.user.uid, onApplication, ["signin"])
    return user
  }))
  return { uid: created.user.uid, email }
}

/** A browser as far as these flows need one: cookies per origin, redirects followed one at a time. */
const makeBrowser = () => {
  const cookiesByOrigin = new Map<string, Map<string, string>>()
  const cookiesOf = (origin: string) => {
    let cookies = cookiesByOrigin.get(origin)
    if (cookies === undefined) cookiesByOrigin.set(origin, cookies = new Map())
    return cookies
  }

  const request = async (url: string | URL, init: RequestInit = {}) => {
    const target = new URL(url)
    const cookies = cookiesOf(target.origin)
    const response = await fetch(target, {
      ...init,
      redirect: "manual",
      headers: { ...(init.headers as Record<string, string>), cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join("; ") }
    })
    for (const line of response.headers.getSetCookie()) {
      const [pair = "", ...attributes] = line.split(";")
      const separator = pair.indexOf("=")
      const name = pair.slice(0, separator).trim()
      const value = pair.slice(separator + 1).trim()
      if (value === "" || attributes.some((attribute) => /^\s*max-age=0\s*$/i.test(attribute))) cookies.delete(name)
      else cookies.set(name, value)
    }
    return response
  }

  /** Follows redirects wherever they lead, as a browser does: the last response and its URL. */
  const follow = async (first: Response, firstUrl: string | URL) => {
    let response = first
    let url = new URL(firstUrl)
    while (response.status >= 300 && response.status < 400) {
      url = new URL(response.headers.get("location")!, url)
      response = await request(url)
    }
    return { response, url }
  }

  return {
    cookiesOf,
    get: (url: string | URL) => request(url),
    post: (url: string | URL, fields: Record<string, string> = {}) =>
      request(url, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(fields).toString()
      }),
    follow,
    navigate: async (url: string | URL) => follow(await request(url), url)
  }
}
type Browser = ReturnType<typeof makeBrowser>

const formField = (html: string, name: string) => {
  const match = new RegExp(`name="${name}" value="([^"]*)"`).exec(html)
  if (match === null) throw new Error(`no ${name} in ${html}`)
  return match[1]!.replace(/&amp;/g, "&")
}

/** Signs in at the SSO's page the browser was sent to; returns the URL the SSO then sends the browser to. */
const submitSsoSignIn = async (
  browser: Browser,
  signInPage: { response: Response; url: URL },
  email: string,
  to: RunningClientApp = app
) => {
  expect(signInPage.url.origin).toBe(sso.url)
  expect(signInPage.response.status).toBe(200)
  const html = await signInPage.response.text()
  const submitted = await browser.post(new URL("/users/sign_in", sso.url), {
    authenticity_token: formField(html, "authenticity_token"),
    return_to: formField(html, "return_to"),
    email,
    password: PASSWORD
  })
  let response = submitted
  let url = new URL("/users/sign_in", sso.url)
  while (url.origin === sso.url && response.status >= 300 && response.status < 400) {
    url = new URL(response.headers.get("location")!, url)
    if (url.origin === sso.url) response = await browser.get(url)
  }
  expect(url.origin).toBe(to.publicUrl)
  return url
}

/** The whole sign-in, from the app's sign-in link back to its home page. */
const signIn = async (email: string, to: RunningClientApp = app) => {
  const browser = makeBrowser()
  const callback = await submitSsoSignIn(browser, await browser.navigate(`${to.url}/auth/sign-in`), email, to)
  const home = await browser.navigate(callback)
  expect(home.url.href).toBe(`${to.url}/`)
  return { browser, home: await home.response.text() }
}

interface HomePage {
  readonly signedIn: boolean
  readonly name?: string
  readonly email?: string
  readonly permissions: ReadonlyArray<string>
}

const readHome = async (browser: Browser, of: RunningClientApp = app): Promise<HomePage> => {
  const response = await browser.get(`${of.url}/`)
  expect(response.status).toBe(200)
  return parseHome(await response.text())
}

const parseHome = (html: string): HomePage => {
  const name = /class="name">([^<]*)</.exec(html)?.[1]
  const email = /class="email">([^<]*)</.exec(html)?.[1]
  const list = /<ul class="permissions">(.*?)<\/ul>/.exec(html)?.[1] ?? ""
  const permissions = [...list.matchAll(/<li>([^<]*)<\/li>/g)].map((match) => match[1]!)
  if (name === undefined) {
    expect(html).toContain(`href="/auth/sign-in">Sign in<`)
    return { signedIn: false, permissions }
  }
  return { signedIn: true, name, email: email!, permissions }
}

const eventually = async (condition: () => Promise<boolean>, what: string) => {
  const deadline = Date.now() + 15_000
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe("the example SSO client app", () => {
  it("shows Sign in when signed out, and sends the browser to the SSO's authorization with state and PKCE", async () => {
    const browser = makeBrowser()
    expect(await readHome(browser)).toEqual({ signedIn: false, permissions: [] })

    const response = await browser.get(`${app.url}/auth/sign-in`)
    expect(response.status).toBe(303)
    const location = new URL(response.headers.get("location")!)
    expect(`${location.origin}${location.pathname}`).toBe(`${sso.url}/oauth/authorize`)
    expect(location.searchParams.get("response_type")).toBe("code")
    expect(location.searchParams.get("redirect_uri")).toBe(`${app.publicUrl}/auth/callback`)
    expect(location.searchParams.get("state")).toMatch(/^[0-9a-f]{32}$/)
    expect(location.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(location.searchParams.get("code_challenge_method")).toBe("S256")
    expect(browser.cookiesOf(app.url).has("signin_attempt")).toBe(true)
  })

  it("signs in through the SSO's form and shows the user's name, email and permissions here, escaped", async () => {
    const { email } = await newUser()
    const { browser, home } = await signIn(email)
    expect(home).not.toContain(USER_NAME)
    expect(parseHome(home)).toEqual({ signedIn: true, name: USER_NAME_IN_HTML, email, permissions: ["signin"] })
    expect(browser.cookiesOf(app.url).has("signin_attempt")).toBe(false)

    const signOut = await browser.post(`${app.url}/auth/sign-out`, { csrf_token: formField(home, "csrf_token") })
    expect(signOut.status).toBe(303)
    expect(await readHome(browser)).toMatchObject({ signedIn: false })
  })

  it("signs out only through its own form: a POST without the form's token is refused and the session stays", async () => {
    const { email } = await newUser()
    const { browser } = await signIn(email)
    for (const fields of [{}, { csrf_token: "forged" }]) {
      expect((await browser.post(`${app.url}/auth/sign-out`, fields)).status).toBe(403)
      expect(await readHome(browser)).toMatchObject({ signedIn: true })
    }
  })

  it("sets the session cookie HttpOnly and SameSite=Lax", async () => {
    const { email } = await newUser()
    const browser = makeBrowser()
    const callback = await submitSsoSignIn(browser, await browser.navigate(`${app.url}/auth/sign-in`), email)
    const response = await browser.get(callback)
    expect(response.status).toBe(303)
    const sessionCookie = response.headers.getSetCookie().find((line) => line.startsWith("session="))
    expect(sessionCookie).toMatch(/; HttpOnly/)
    expect(sessionCookie).toMatch(/; SameSite=Lax/)
  })

  it("refuses a callback whose state is not the one it sent, and makes no session", async () => {
    const { email } = await newUser()
    const browser = makeBrowser()
    const callback = await submitSsoSignIn(browser, await browser.navigate(`${app.url}/auth/sign-in`), email)
    expect(callback.searchParams.get("code")).toBeTruthy()
    const forged = new URL(callback)
    forged.searchParams.set("state", "0".repeat(32))

    const response = await browser.get(forged)
    expect(response.status).toBe(400)
    expect(response.headers.getSetCookie().some((line) => line.startsWith("session="))).toBe(false)
    expect(browser.cookiesOf(app.url).has("session")).toBe(false)
    expect(await readHome(browser)).toMatchObject({ signedIn: false })
  })

  it("shows new permissions once the SSO pushes the user's update", async () => {
    const { uid, email } = await newUser()
    const { browser } = await signIn(email)
    expect(await readHome(browser)).toMatchObject({ permissions: ["signin"] })

    await sso.run(Effect.flatMap(Directory, (directory) => directory.setPermissions(uid, applicationName, ["signin", "editor"])))
    await eventually(async () => (await readHome(browser)).permissions.includes("editor"), "the pushed editor permission")
    expect(await readHome(browser)).toMatchObject({ signedIn: true, permissions: ["editor", "signin"] })
  })

  it("ends the user's sessions here when they sign out at the SSO (a reauth push)", async () => {
    const { email } = await newUser()
    const { browser } = await signIn(email)
    const { browser: otherBrowser } = await signIn(email)

    const ssoPage = await browser.get(new URL("/users/sign_in", sso.url))
    const html = await ssoPage.text()
    expect(html).toContain("You are signed in")
    const signedOut = await browser.post(new URL("/users/sign_out", sso.url), { authenticity_token: formField(html, "authenticity_token") })
    expect(signedOut.status).toBe(200)

    await eventually(async () => !(await readHome(browser)).signedIn, "the reauth push to end the session")
    expect(await readHome(otherBrowser)).toMatchObject({ signedIn: false })
  })

  it("ends the user's sessions here when they are suspended at the SSO", async () => {
    const { uid, email } = await newUser()
    const { browser } = await signIn(email)
    const { email: bystanderEmail } = await newUser()
    const { browser: bystander } = await signIn(bystanderEmail)

    await sso.run(Effect.flatMap(Directory, (directory) => directory.suspend(uid, "left the organisation")))
    await eventually(async () => !(await readHome(browser)).signedIn, "the suspension's pushes to end the session")
    expect(await readHome(bystander)).toMatchObject({ signedIn: true, email: bystanderEmail })
  })

  it("refuses a push whose bearer token the SSO does not accept, and changes nothing", async () => {
    const { uid, email } = await newUser()
    const { browser } = await signIn(email)
    const pushed = {
      user: { uid, name: "Mallory", email, permissions: { [applicationName]: ["signin", "editor"] }, disabled: false }
    }
    const update = await fetch(`${app.url}/users/${uid}`, {
      method: "PUT",
      headers: { authorization: `Bearer ${"0".repeat(32)}`, "content-type": "application/json" },
      body: JSON.stringify(pushed)
    })
    expect(update.status).toBe(401)
    expect(update.headers.get("www-authenticate")).toMatch(/^Bearer/)
    const reauth = await fetch(`${app.url}/users/${uid}/reauth`, {
      method: "POST",
      headers: { authorization: `Bearer ${"0".repeat(32)}`, "content-type": "application/json" },
      body: "{}"
    })
    expect(reauth.status).toBe(401)

    expect(await readHome(browser)).toEqual({ signedIn: true, name: USER_NAME_IN_HTML, email, permissions: ["signin"] })
  })
})

describe("the example app's sessions over time", () => {
  // pushes are off for this app, so what it shows after a while comes from refreshing, not from a push
  let clock: { now: number }
  let timed: { app: RunningClientApp; name: string }
  beforeAll(async () => {
    clock = { now: Date.now() }
    timed = await registeredApp({ pushUpdates: false, now: () => clock.now, sessionIdleTimeoutMs: 30 * 60_000 })
  })
  afterAll(() => timed?.app.close())

  const grant = (uid: string, permissions: Array<string>) =>
    sso.run(Effect.flatMap(Directory, (directory) => directory.setPermissions(uid, timed.name, permissions)))

  it("ends a session unused for 30 minutes, and keeps one in use", async () => {
    const { email } = await newUser(timed.name)
    const { browser } = await signIn(email, timed.app)
    clock.now += 29 * 60_000
    expect(await readHome(browser, timed.app)).toMatchObject({ signedIn: true })
    clock.now += 29 * 60_000
    expect(await readHome(browser, timed.app)).toMatchObject({ signedIn: true })
    clock.now += 30 * 60_000
    expect(await readHome(browser, timed.app)).toMatchObject({ signedIn: false })
  })

  it("refreshes an expired access token and reads the user again; a refused refresh ends the session", async () => {
    const { uid, email } = await newUser(timed.name)
    const { browser } = await signIn(email, timed.app)
    await grant(uid, ["signin", "editor"])
    expect(await readHome(browser, timed.app)).toMatchObject({ permissions: ["signin"] })
    for (let minutes = 0; minutes <= 120; minutes += 20) {
      clock.now += 20 * 60_000
      await readHome(browser, timed.app)
    }
    expect(await readHome(browser, timed.app)).toMatchObject({ signedIn: true, permissions: ["editor", "signin"] })

    await sso.run(Effect.flatMap(Directory, (directory) => directory.suspend(uid, "left")))
    for (let minutes = 0; minutes <= 120; minutes += 20) {
      clock.now += 20 * 60_000
      if (!(await readHome(browser, timed.app)).signedIn) break
    }
    expect(await readHome(browser, timed.app)).toMatchObject({ signedIn: false })
  })
})
