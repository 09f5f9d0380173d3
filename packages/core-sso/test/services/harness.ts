import { Effect, Option } from "effect"
import type { AuthorizeQuery } from "../../src/services/Authorization"
import { Authorization } from "../../src/services/Authorization"
import { Directory } from "../../src/services/Directory"
import { OAuthServer } from "../../src/services/OAuthServer"
import { SignIn } from "../../src/services/SignIn"
import { challengeOf } from "../../src/domain/pkce"

export const REDIRECT_URI = "https://publisher.example/auth/callback"
export const PASSWORD = "correct horse battery staple"
export const VERIFIER = "a-pkce-verifier-that-is-long-enough-to-be-valid-0123456789"

export const basic = (clientId: string, clientSecret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString("base64")}`

export const origin = (authorization?: string, address = "192.0.2.1") => ({ address, authorization })

/** An application `Publisher` with `editor`, and Ada, who may sign in to it. */
export const publisherAndAda = Effect.gen(function*() {
  const directory = yield* Directory
  const { application, clientId, clientSecret } = yield* directory.createApplication({
    name: "Publisher",
    homeUri: "https://publisher.example",
    redirectUris: [REDIRECT_URI],
    permissions: ["editor"]
  })
  const ada = yield* directory.createUser({ email: "ada@example.com", name: "Ada", password: PASSWORD })
  yield* directory.setPermissions(ada.user.uid, "Publisher", ["signin", "editor"])
  return { application, clientId, clientSecret, ada: ada.user }
})

export const authorizeQuery = (clientId: string, overrides: Record<string, string | undefined> = {}): AuthorizeQuery => {
  const query: Record<string, string> = {}
  const all = {
    response_type: "code",
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    state: "the-state",
    code_challenge: challengeOf(VERIFIER),
    code_challenge_method: "S256",
    ...overrides
  }
  for (const [name, value] of Object.entries(all)) if (value !== undefined) query[name] = value
  return query
}

/** Signs Ada in and runs the authorization request: the code it redirects with. */
export const codeFor = (clientId: string, overrides: Record<string, string | undefined> = {}) =>
  Effect.gen(function*() {
    const started = yield* (yield* SignIn).signIn({ email: "ada@example.com", password: PASSWORD, address: "192.0.2.1" })
    const outcome = yield* (yield* Authorization).authorize(
      authorizeQuery(clientId, overrides),
      Option.some({ user: started.user, authTime: new Date(0) })
    )
    if (outcome._tag !== "Redirect") throw new Error(`expected a redirect, got ${outcome._tag}`)
    const code = new URL(outcome.location).searchParams.get("code")
    if (code === null) throw new Error(`no code in ${outcome.location}`)
    return code
  })

/** `verifier: null` sends none. */
export const exchangeCode = (clientId: string, clientSecret: string, code: string, verifier: string | null = VERIFIER) =>
  Effect.flatMap(OAuthServer, (server) =>
    server.exchange({
      grant_type: "authorization_code",
      code,
      redirect_uri: REDIRECT_URI,
      ...(verifier === null ? {} : { code_verifier: verifier }),
      client_id: clientId,
      client_secret: clientSecret
    }, origin()))

export const userWith = (accessToken: string) =>
  Effect.flatMap(OAuthServer, (server) => server.user(origin(`Bearer ${accessToken}`), undefined))
