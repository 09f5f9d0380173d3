import {
  createPushReceiver,
  createSsoOAuthClient,
  OAuthCallbackError,
  OAuthRequestRefused,
  type SeedPushedUser,
  type TokenResponse
} from "@civicstack/sdk-sso"
import { randomBytes } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

export interface ClientAppOptions {
  /** Where the SSO is served, e.g. `http://localhost:3000`. */
  readonly ssoUrl: string
  readonly clientId: string
  readonly clientSecret: string
  /**
   * This application's name at the SSO: `seed` pushes give a user's permissions by application name, and this
   * application shows its own.
   */
  readonly applicationName: string
  /**
   * This application's base URL as browsers and the SSO reach it: its home URI at the SSO. The redirect URI is
   * this + `/auth/callback`. Default: the address it listens on.
   */
  readonly publicUrl?: string | undefined
  /** Default 0: any free port. */
  readonly port?: number | undefined
  /** Default: every interface. */
  readonly host?: string | undefined
}

export interface RunningClientApp {
  /** The address it listens on. */
  readonly url: string
  /** The base URL it tells the SSO about. */
  readonly publicUrl: string
  readonly close: () => Promise<void>
}

interface SignedInUser {
  readonly name: string
  readonly email: string
  /** On this application only. */
  readonly permissions: ReadonlyArray<string>
}

interface Session {
  readonly uid: string
  user: SignedInUser
  readonly tokens: TokenResponse
}

interface PendingSignIn {
  readonly state: string
  readonly codeVerifier: string
  readonly startedAt: number
}

const SESSION_COOKIE = "session"
const PENDING_SIGN_IN_COOKIE = "signin_attempt"
const PENDING_SIGN_IN_LIFETIME_MS = 10 * 60 * 1000

const randomId = () => randomBytes(32).toString("base64url")

const escapeHtml = (text: string) =>
  text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;")

const cookiesOf = (request: IncomingMessage): Map<string, string> => {
  const cookies = new Map<string, string>()
  for (const pair of (request.headers.cookie ?? "").split(";")) {
    const separator = pair.indexOf("=")
    if (separator > 0) cookies.set(pair.slice(0, separator).trim(), pair.slice(separator + 1).trim())
  }
  return cookies
}

const page = (title: string, body: string) =>
  `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>
<body>
${body}
</body>
</html>
`

const sendHtml = (response: ServerResponse, status: number, html: string, headers: Record<string, string | Array<string>> = {}) => {
  response.writeHead(status, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store", ...headers })
  response.end(html)
}

const redirect = (response: ServerResponse, location: string, cookies: Array<string> = []) => {
  response.writeHead(303, { location, "cache-control": "no-store", ...(cookies.length === 0 ? {} : { "set-cookie": cookies }) })
  response.end()
}

const homePage = (session: Session | undefined) => {
  if (session === undefined) {
    return page("Example app", `<h1>Example app</h1>\n<p><a href="/auth/sign-in">Sign in</a></p>`)
  }
  const { name, email, permissions } = session.user
  const permissionItems = permissions.map((permission) => `<li>${escapeHtml(permission)}</li>`).join("")
  return page("Example app", [
    "<h1>Example app</h1>",
    `<p>Signed in as <strong class="name">${escapeHtml(name)}</strong> (<span class="email">${escapeHtml(email)}</span>)</p>`,
    `<h2>Your permissions here</h2>`,
    permissions.length === 0 ? "<p>None</p>" : `<ul class="permissions">${permissionItems}</ul>`,
    `<form method="post" action="/auth/sign-out"><button type="submit">Sign out</button></form>`
  ].join("\n"))
}

/** A `node:http` application that signs people in with the SSO and follows its `seed` pushes. */
export const startClientApp = async (options: ClientAppOptions): Promise<RunningClientApp> => {
  const sso = createSsoOAuthClient({ baseUrl: options.ssoUrl, clientId: options.clientId, clientSecret: options.clientSecret })
  const sessions = new Map<string, Session>()
  const pendingSignIns = new Map<string, PendingSignIn>()
  let publicUrl = ""
  let redirectUri = ""
  let secureCookies = false

  const cookie = (name: string, value: string, maxAgeSeconds?: number) =>
    [
      `${name}=${value}`,
      "Path=/",
      "HttpOnly",
      "SameSite=Lax",
      ...(secureCookies ? ["Secure"] : []),
      ...(maxAgeSeconds === undefined ? [] : [`Max-Age=${maxAgeSeconds}`])
    ].join("; ")
  const expiredCookie = (name: string) => cookie(name, "", 0)

  const sessionsOf = (uid: string) => [...sessions].filter(([, session]) => session.uid === uid)
  const endSessionsOf = (uid: string) => {
    for (const [id] of sessionsOf(uid)) sessions.delete(id)
  }

  const pushes = createPushReceiver({
    baseUrl: options.ssoUrl,
    clientId: options.clientId,
    format: "seed",
    onUpdate: (pushed: SeedPushedUser) => {
      if (pushed.disabled) return endSessionsOf(pushed.uid)
      const user: SignedInUser = {
        name: pushed.name,
        email: pushed.email,
        permissions: pushed.permissions[options.applicationName] ?? []
      }
      for (const [, session] of sessionsOf(pushed.uid)) session.user = user
    },
    onReauth: endSessionsOf
  })

  const forgetExpiredSignIns = () => {
    const oldest = Date.now() - PENDING_SIGN_IN_LIFETIME_MS
    for (const [id, pending] of pendingSignIns) {
      if (pending.startedAt < oldest) pendingSignIns.delete(id)
    }
  }

  const signIn = (response: ServerResponse) => {
    forgetExpiredSignIns()
    const start = sso.authorizationUrl({ redirectUri })
    const attemptId = randomId()
    pendingSignIns.set(attemptId, { state: start.state, codeVerifier: start.codeVerifier, startedAt: Date.now() })
    redirect(response, start.url, [cookie(PENDING_SIGN_IN_COOKIE, attemptId, PENDING_SIGN_IN_LIFETIME_MS / 1000)])
  }

  const callback = async (request: IncomingMessage, response: ServerResponse) => {
    const attemptId = cookiesOf(request).get(PENDING_SIGN_IN_COOKIE)
    const pending = attemptId === undefined ? undefined : pendingSignIns.get(attemptId)
    // A callback is good for one try: a forged one also spends the attempt, and the user starts again.
    if (attemptId !== undefined) pendingSignIns.delete(attemptId)
    const clearAttempt = expiredCookie(PENDING_SIGN_IN_COOKIE)
    if (pending === undefined || pending.startedAt < Date.now() - PENDING_SIGN_IN_LIFETIME_MS) {
      return sendHtml(response, 400, page("Sign-in failed", `<p>This sign-in has expired. <a href="/auth/sign-in">Sign in again</a></p>`), {
        "set-cookie": clearAttempt
      })
    }
    try {
      const { code } = sso.checkCallback(request.url ?? "", pending.state)
      const tokens = await sso.exchangeCode(code, pending.codeVerifier, redirectUri)
      const user = await sso.fetchUser(tokens.access_token)
      const sessionId = randomId()
      sessions.set(sessionId, {
        uid: user.uid,
        user: { name: user.name, email: user.email, permissions: user.permissions },
        tokens
      })
      redirect(response, "/", [clearAttempt, cookie(SESSION_COOKIE, sessionId)])
    } catch (error) {
      if (!(error instanceof OAuthCallbackError || error instanceof OAuthRequestRefused)) throw error
      const detail = error instanceof OAuthCallbackError ? error.errorDescription ?? error.reason : error.error
      sendHtml(response, 400, page("Sign-in failed", `<p>Sign-in failed: ${escapeHtml(detail)}. <a href="/auth/sign-in">Try again</a></p>`), {
        "set-cookie": clearAttempt
      })
    }
  }

  const signOut = (request: IncomingMessage, response: ServerResponse) => {
    const sessionId = cookiesOf(request).get(SESSION_COOKIE)
    if (sessionId !== undefined) sessions.delete(sessionId)
    redirect(response, "/", [expiredCookie(SESSION_COOKIE)])
  }

  const route = async (request: IncomingMessage, response: ServerResponse) => {
    if (await pushes.handle(request, response)) return
    const { pathname } = new URL(request.url ?? "/", "http://app.invalid")
    const method = request.method ?? "GET"
    if (pathname === "/" && method === "GET") {
      const sessionId = cookiesOf(request).get(SESSION_COOKIE)
      return sendHtml(response, 200, homePage(sessionId === undefined ? undefined : sessions.get(sessionId)))
    }
    if (pathname === "/auth/sign-in" && method === "GET") return signIn(response)
    if (pathname === "/auth/callback" && method === "GET") return callback(request, response)
    // SameSite=Lax keeps the session cookie off cross-site POSTs, so another site cannot sign people out.
    if (pathname === "/auth/sign-out" && method === "POST") return signOut(request, response)
    sendHtml(response, 404, page("Not found", "<p>Not found</p>"))
  }

  const server = createServer((request, response) => {
    route(request, response).catch((error: unknown) => {
      console.error(`${request.method} ${request.url} failed:`, error)
      if (!response.headersSent) sendHtml(response, 500, page("Error", "<p>Something went wrong.</p>"))
      else response.end()
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port ?? 0, options.host, () => {
      server.off("error", reject)
      resolve()
    })
  })
  const address = server.address() as AddressInfo
  const listeningHost = address.family === "IPv6" ? `[${address.address}]` : address.address
  const url = `http://${listeningHost}:${address.port}`
  publicUrl = (options.publicUrl ?? url).replace(/\/+$/, "")
  if (new URL(publicUrl).pathname !== "/") {
    await new Promise((resolve) => server.close(resolve))
    throw new Error(`The public URL must be an origin without a path (the pushes come to /users/...): ${publicUrl}`)
  }
  redirectUri = `${publicUrl}/auth/callback`
  secureCookies = publicUrl.startsWith("https:")

  return {
    url,
    publicUrl,
    close: async () => {
      await new Promise<void>((resolve, reject) => {
        server.closeAllConnections()
        server.close((error) => (error ? reject(error) : resolve()))
      })
      await Promise.all([sso.close(), pushes.close()])
    }
  }
}
