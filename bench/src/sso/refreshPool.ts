import { createHash, randomBytes } from "node:crypto"
import { benchApplication, signInUser } from "./bootstrap"

/** Cookies by name, as the sign-in pages set them; enough of a browser for the authorization code flow. */
const makeCookieJar = () => {
  const cookies = new Map<string, string>()
  return {
    header: () => [...cookies].map(([name, value]) => `${name}=${value}`).join("; "),
    remember: (response: Response) => {
      for (const line of response.headers.getSetCookie()) {
        const pair = line.split(";")[0] ?? ""
        const separator = pair.indexOf("=")
        const name = pair.slice(0, separator).trim()
        const value = pair.slice(separator + 1).trim()
        if (value === "" || /;\s*max-age=0\s*(;|$)/i.test(line)) cookies.delete(name)
        else cookies.set(name, value)
      }
    }
  }
}

const codeVerifier = randomBytes(32).toString("base64url")
const authorizePath = `/oauth/authorize?${new URLSearchParams({
  response_type: "code",
  client_id: benchApplication.clientId,
  redirect_uri: benchApplication.redirectUri,
  state: "bench",
  code_challenge: createHash("sha256").update(codeVerifier).digest("base64url"),
  code_challenge_method: "S256"
})}`

const formValue = (html: string, name: string) => {
  const value = new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1]
  if (value === undefined) throw new Error(`no ${name} in the sign-in page`)
  return value.replaceAll("&amp;", "&")
}

/**
 * Signs in once through the pages, then runs the authorization code flow `count` times on that session (authorize,
 * then exchange the code), `concurrency` at a time: one fresh refresh token per flow, each the head of a chain.
 */
export const obtainRefreshTokens = async (
  baseUrl: string,
  count: number,
  concurrency: number,
  progress: (obtained: number) => void
): Promise<Array<string>> => {
  const jar = makeCookieJar()
  const request = async (path: string, init: RequestInit = {}) => {
    const response = await fetch(new URL(path, baseUrl), {
      ...init,
      redirect: "manual",
      headers: { ...(init.headers as Record<string, string> | undefined), cookie: jar.header() }
    })
    jar.remember(response)
    return response
  }
  /** Follows redirects within the server; returns the first location outside it (the application's callback). */
  const followToCallback = async (first: Response): Promise<{ callback?: URL; last: Response }> => {
    let response = first
    while (response.status >= 300 && response.status < 400) {
      const location = new URL(response.headers.get("location") ?? "", baseUrl)
      if (location.origin !== new URL(baseUrl).origin) return { callback: location, last: response }
      await response.body?.cancel()
      response = await request(`${location.pathname}${location.search}`)
    }
    return { last: response }
  }

  const signInPage = await followToCallback(await request(authorizePath))
  if (signInPage.callback === undefined) {
    const html = await signInPage.last.text()
    const signedIn = await followToCallback(
      await request("/users/sign_in", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          authenticity_token: formValue(html, "authenticity_token"),
          return_to: formValue(html, "return_to"),
          email: signInUser.email,
          password: signInUser.password
        }).toString()
      })
    )
    if (signedIn.callback === undefined) throw new Error(`signing in ended at ${signedIn.last.status}`)
  }

  const oneRefreshToken = async (): Promise<string> => {
    const { callback, last } = await followToCallback(await request(authorizePath))
    const code = callback?.searchParams.get("code")
    if (code === undefined || code === null) throw new Error(`authorize ended at ${last.status} without a code`)
    const response = await fetch(new URL("/oauth/token", baseUrl), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code,
        redirect_uri: benchApplication.redirectUri,
        code_verifier: codeVerifier,
        client_id: benchApplication.clientId,
        client_secret: benchApplication.clientSecret
      }).toString()
    })
    const tokens = await response.json() as { refresh_token?: string }
    if (response.status !== 200 || tokens.refresh_token === undefined) {
      throw new Error(`the code exchange answered ${response.status}: ${JSON.stringify(tokens)}`)
    }
    return tokens.refresh_token
  }

  const refreshTokens: Array<string> = []
  let started = 0
  const worker = async () => {
    while (started < count) {
      started += 1
      refreshTokens.push(await oneRefreshToken())
      if (refreshTokens.length % 500 === 0) progress(refreshTokens.length)
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  return refreshTokens
}
