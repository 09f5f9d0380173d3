import {
  accessTokenExpiresAt,
  createPushReceiver,
  createSsoOAuthClient,
  OAuthCallbackError,
  OAuthRequestRefused,
  type SeedPushedUser,
  type TokenResponse
} from "@civicstack/sdk-sso"
import { createHash, randomBytes, timingSafeEqual } from "node:crypto"
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
  /** A session unused for this long ends. Default 30 minutes. */
  readonly sessionIdleTimeoutMs?: number | undefined
  /** The clock sessions and tokens are timed by, in milliseconds. Default `Date.now`. */
  readonly now?: (() => number) | undefined
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
  tokens: TokenResponse
  /** Sent back with the sign-out form: another site cannot sign people out. */
  readonly csrfToken: string
  lastSeenAt: number
}

interface PendingSignIn {
  readonly state: string
  readonly codeVerifier: string
  readonly startedAt: number
}

const SESSION_COOKIE = "session"
const DEFAULT_SESSION_IDLE_TIMEOUT_MS = 30 * 60 * 1000
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

const sameSecret = (a: string, b: string) =>
  timingSafeEqual(createHash("sha256").update(a).digest(), createHash("sha256").update(b).digest())

const readForm = async (request: IncomingMessage, limitBytes = 4096): Promise<URLSearchParams> => {
  let body = ""
  for await (const chunk of request) {
    body += String(chunk)
    if (body.length > limitBytes) break
  }
  return new URLSearchParams(body)
}

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
    `<form method="post" action="/auth/sign-out">`,
    `<input type="hidden" name="csrf_token" value="${escapeHtml(session.csrfToken)}">`,
    `<button type="submit">Sign out</button>`,
    `</form>`
  ].join("\n"))
}

/** A `node:http` application that signs people in with the SSO and follows its `seed` pushes. */
export const startClientApp = async (options: ClientAppOptions): Promise<RunningClientApp> => {
  const sso = createSsoOAuthClient({ baseUrl: options.ssoUrl, clientId: options.clientId, clientSecret: options.clientSecret })
  const now = options.now ?? Date.now
  const idleTimeoutMs = options.sessionIdleTimeoutMs ?? DEFAULT_SESSION_IDLE_TIMEOUT_MS
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

  const forgetExpired = () => {
    const oldestSignIn = now() - PENDING_SIGN_IN_LIFETIME_MS
    for (const [id, pending] of pendingSignIns) {
      if (pending.startedAt < oldestSignIn) pendingSignIns.delete(id)
    }
    const oldestUse = now() - idleTimeoutMs
    for (const [id, session] of sessions) {
      if (session.lastSeenAt < oldestUse) sessions.delete(id)
    }
  }

  /**
   * The request's session, if it has one still in use. An expired access token is refreshed and the user read
   * again; a refused refresh (the user was suspended or signed out at the SSO) ends the session.
   */
  const currentSession = async (request: IncomingMessage): Promise<readonly [string, Session] | undefined> => {
    const sessionId = cookiesOf(request).get(SESSION_COOKIE)
    const session = sessionId === undefined ? undefined : sessions.get(sessionId)
    if (sessionId === undefined || session === undefined) return undefined
    if (now() - session.lastSeenAt >= idleTimeoutMs) {
      sessions.delete(sessionId)
      return undefined
    }
    session.lastSeenAt = now()
    if (now() >= accessTokenExpiresAt(session.tokens).getTime()) {
      try {
        session.tokens = await sso.refresh(session.tokens.refresh_token)
        const user = await sso.fetchUser(session.tokens.access_token)
        session.user = { name: user.name, email: user.email, permissions: user.permissions }
      } catch (error) {
        if (!(error instanceof OAuthRequestRefused)) throw error
        sessions.delete(sessionId)
        return undefined
      }
    }
    return [sessionId, session]
  }

  const signIn = (response: ServerResponse) => {
    forgetExpired()
    const start = sso.authorizationUrl({ redirectUri })
    const attemptId = randomId()
    pendingSignIns.set(attemptId, { state: start.state, codeVerifier: start.codeVerifier, startedAt: now() })
    redirect(response, start.url, [cookie(PENDING_SIGN_IN_COOKIE, attemptId, PENDING_SIGN_IN_LIFETIME_MS / 1000)])
  }

  const callback = async (request: IncomingMessage, response: ServerResponse) => {
    const attemptId = cookiesOf(request).get(PENDING_SIGN_IN_COOKIE)
    const pending = attemptId === undefined ? undefined : pendingSignIns.get(attemptId)
    // A callback is good for one try: a forged one also spends the attempt, and the user starts again.
    if (attemptId !== undefined) pendingSignIns.delete(attemptId)
    const clearAttempt = expiredCookie(PENDING_SIGN_IN_COOKIE)
    if (pending === undefined || pending.startedAt < now() - PENDING_SIGN_IN_LIFETIME_MS) {
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
        tokens,
        csrfToken: randomId(),
        lastSeenAt: now()
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

  const signOut = async (request: IncomingMessage, response: ServerResponse) => {
    const current = await currentSession(request)
    if (current !== undefined) {
      const presented = (await readForm(request)).get("csrf_token") ?? ""
      if (!sameSecret(presented, current[1].csrfToken)) {
        return sendHtml(response, 403, page("Not signed out", `<p>This sign-out did not come from this site's form. <a href="/">Back</a></p>`))
      }
      sessions.delete(current[0])
    }
    redirect(response, "/", [expiredCookie(SESSION_COOKIE)])
  }

  const route = async (request: IncomingMessage, response: ServerResponse) => {
    if (await pushes.handle(request, response)) return
    const { pathname } = new URL(request.url ?? "/", "http://app.invalid")
    const method = request.method ?? "GET"
    if (pathname === "/" && method === "GET") return sendHtml(response, 200, homePage((await currentSession(request))?.[1]))
    if (pathname === "/auth/sign-in" && method === "GET") return signIn(response)
    if (pathname === "/auth/callback" && method === "GET") return callback(request, response)
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
