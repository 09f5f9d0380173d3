import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { Duration, Effect, Either } from "effect"
import { createHash } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  accessTokenExpiresAt,
  authorizationUrl,
  checkCallback,
  createSsoOAuthClient,
  InvalidToken,
  makeSsoOAuthClient,
  OAuthCallbackError,
  OAuthClientRefused,
  OAuthRequestRefused,
  OAuthThrottled
} from "../src"
import { applicationAndUser, authorizeAs, type ClientApplication, type RealSso, REDIRECT_URI, startRealSso } from "./support/realSso"

let sso: RealSso
let application: ClientApplication
let email: string
let uid: string

beforeAll(async () => {
  sso = await startRealSso()
  ;({ application, email, uid } = await sso.run(applicationAndUser()))
})
afterAll(() => sso?.close())

describe("authorizationUrl", () => {
  it("points at the SSO's authorization endpoint with the code flow, a fresh state and a PKCE S256 challenge", () => {
    const start = authorizationUrl({ baseUrl: "https://signon.example/prefix/", clientId: "client-1" }, {
      redirectUri: "https://app.example/callback",
      scope: "openid email"
    })
    const url = new URL(start.url)
    expect(`${url.origin}${url.pathname}`).toBe("https://signon.example/prefix/oauth/authorize")
    expect(Object.fromEntries(url.searchParams)).toEqual({
      response_type: "code",
      client_id: "client-1",
      redirect_uri: "https://app.example/callback",
      state: start.state,
      code_challenge: createHash("sha256").update(start.codeVerifier).digest("base64url"),
      code_challenge_method: "S256",
      scope: "openid email"
    })
    expect(start.state).toMatch(/^[0-9a-f]{32}$/)
    expect(start.codeVerifier).toMatch(/^[A-Za-z0-9_-]{43,128}$/)
  })

  it("makes a new state and verifier each time, and sends no scope unless asked", () => {
    const options = { baseUrl: "https://signon.example", clientId: "client-1" }
    const first = authorizationUrl(options, { redirectUri: "https://app.example/callback" })
    const second = authorizationUrl(options, { redirectUri: "https://app.example/callback" })
    expect(first.state).not.toBe(second.state)
    expect(first.codeVerifier).not.toBe(second.codeVerifier)
    expect(new URL(first.url).searchParams.has("scope")).toBe(false)
  })
})

describe("checkCallback", () => {
  const state = "0123456789abcdef0123456789abcdef"
  const refusal = (input: Parameters<typeof checkCallback>[0], expected = state) => {
    const checked = checkCallback(input, expected)
    if (Either.isRight(checked)) throw new Error("expected a refusal")
    return checked.left
  }

  it("returns the code when the state is the one sent, from a URL, a query string or parsed parameters", () => {
    expect(checkCallback(`https://app.example/callback?code=the-code&state=${state}`, state)).toEqual(Either.right({ code: "the-code" }))
    expect(checkCallback(`code=the-code&state=${state}`, state)).toEqual(Either.right({ code: "the-code" }))
    expect(checkCallback({ code: "the-code", state }, state)).toEqual(Either.right({ code: "the-code" }))
  })

  it("refuses a missing, empty, repeated or different state", () => {
    expect(refusal("https://app.example/callback?code=c")).toMatchObject({ reason: "MissingState" })
    expect(refusal("code=c&state=")).toMatchObject({ reason: "MissingState" })
    expect(refusal({ code: "c", state: [state, state] })).toMatchObject({ reason: "MissingState" })
    expect(refusal(`code=c&state=${state.replace("0", "1")}`)).toMatchObject({ reason: "StateMismatch" })
    expect(refusal(`code=c&state=${state}x`)).toMatchObject({ reason: "StateMismatch" })
    expect(refusal(`code=c&state=${state}`, "")).toMatchObject({ reason: "StateMismatch" })
  })

  it("checks the state before believing an error, then surfaces error and error_description", () => {
    expect(refusal("error=access_denied&state=forged")).toMatchObject({ reason: "StateMismatch" })
    const refused = refusal(`error=invalid_request&error_description=state+is+required&state=${state}`)
    expect(refused).toBeInstanceOf(OAuthCallbackError)
    expect(refused).toMatchObject({ reason: "AuthorizationRefused", error: "invalid_request", errorDescription: "state is required" })
    expect(refusal(`state=${state}`)).toMatchObject({ reason: "MissingCode" })
  })
})

describe("the OAuth client with Promises, through a real authorization", () => {
  it("exchanges the code, fetches the user, refreshes, and the old refresh token is refused", async () => {
    const client = createSsoOAuthClient({ baseUrl: sso.url, clientId: application.clientId, clientSecret: application.clientSecret })
    try {
      const start = client.authorizationUrl({ redirectUri: REDIRECT_URI })
      const callback = await sso.run(authorizeAs(email, start.url))
      expect(() => client.checkCallback(callback, "f".repeat(32))).toThrow(OAuthCallbackError)
      const { code } = client.checkCallback(callback, start.state)

      const tokens = await client.exchangeCode(code, start.codeVerifier, REDIRECT_URI)
      expect(tokens).toMatchObject({ token_type: "Bearer", expires_in: 7200 })
      const expiresIn = accessTokenExpiresAt(tokens).getTime() - Date.now()
      expect(expiresIn).toBeGreaterThan(7190_000)
      expect(expiresIn).toBeLessThanOrEqual(7200_000)
      const user = await client.fetchUser(tokens.access_token)
      expect(user).toEqual({
        uid,
        name: "Grace Hopper",
        email,
        permissions: ["editor", "signin"],
        organisation_slug: null,
        organisation_content_id: null,
        disabled: false
      })

      const refreshed = await client.refresh(tokens.refresh_token)
      expect(refreshed.access_token).not.toBe(tokens.access_token)
      expect((await client.fetchUser(refreshed.access_token)).uid).toBe(uid)
      const reused = client.refresh(tokens.refresh_token)
      await expect(reused).rejects.toBeInstanceOf(OAuthRequestRefused)
      await expect(reused).rejects.toMatchObject({ error: "invalid_grant" })
    } finally {
      await client.close()
    }
  })

  it("a code used with the wrong verifier is invalid_grant; wrong credentials are invalid_client; a bad token is InvalidToken", async () => {
    const client = createSsoOAuthClient({ baseUrl: sso.url, clientId: application.clientId, clientSecret: application.clientSecret })
    const impostor = createSsoOAuthClient({ baseUrl: sso.url, clientId: application.clientId, clientSecret: "0".repeat(32) })
    try {
      const start = client.authorizationUrl({ redirectUri: REDIRECT_URI })
      const { code } = client.checkCallback(await sso.run(authorizeAs(email, start.url)), start.state)
      await expect(impostor.exchangeCode(code, start.codeVerifier, REDIRECT_URI)).rejects.toBeInstanceOf(OAuthClientRefused)
      await expect(client.exchangeCode(code, `${start.codeVerifier}x`, REDIRECT_URI)).rejects.toMatchObject({
        _tag: "OAuthRequestRefused",
        error: "invalid_grant"
      })
      await expect(client.fetchUser("0".repeat(32))).rejects.toBeInstanceOf(InvalidToken)
    } finally {
      await client.close()
      await impostor.close()
    }
  })
})

describe("a throttled client", () => {
  it("learns how long to wait from Retry-After, with Promises and with Effect", async () => {
    const throttledSso = await startRealSso({ clientAuthentication: { perClient: 2, perAddress: 100, window: Duration.minutes(10) } })
    const impostor = createSsoOAuthClient({ baseUrl: throttledSso.url, clientId: "a".repeat(32), clientSecret: "0".repeat(32) })
    try {
      for (let attempt = 0; attempt < 2; attempt++) {
        await expect(impostor.refresh("f".repeat(32))).rejects.toBeInstanceOf(OAuthClientRefused)
      }
      const throttled = await impostor.refresh("f".repeat(32)).catch((error: unknown) => error)
      expect(throttled).toBeInstanceOf(OAuthThrottled)
      const wait = (throttled as OAuthThrottled).retry_after_seconds
      expect(wait).toBeGreaterThan(0)
      expect(wait).toBeLessThanOrEqual(600)

      const viaEffect = await Effect.runPromise(Effect.gen(function*() {
        const client = yield* makeSsoOAuthClient({ baseUrl: throttledSso.url, clientId: "a".repeat(32), clientSecret: "0".repeat(32) })
        return yield* Effect.flip(client.refresh("f".repeat(32)))
      }).pipe(Effect.provide(FetchHttpClient.layer)))
      expect(viaEffect).toMatchObject({ _tag: "OAuthThrottled", error: "slow_down" })
      expect((viaEffect as OAuthThrottled).retry_after_seconds).toBeGreaterThan(0)
    } finally {
      await impostor.close()
      await throttledSso.close()
    }
  })
})

describe("the OAuth client with Effect", () => {
  it("runs the same flow", async () => {
    const program = Effect.gen(function*() {
      const client = yield* makeSsoOAuthClient({ baseUrl: sso.url, clientId: application.clientId, clientSecret: application.clientSecret })
      const start = client.authorizationUrl({ redirectUri: REDIRECT_URI })
      const callback = yield* Effect.promise(() => sso.run(authorizeAs(email, start.url)))
      const wrongState = yield* Effect.flip(client.checkCallback(callback, "e".repeat(32)))
      const { code } = yield* client.checkCallback(callback, start.state)
      const tokens = yield* client.exchangeCode(code, start.codeVerifier, REDIRECT_URI)
      const user = yield* client.fetchUser(tokens.access_token)
      return { wrongState, user }
    }).pipe(Effect.provide(FetchHttpClient.layer))
    const { user, wrongState } = await Effect.runPromise(program)
    expect(wrongState).toMatchObject({ _tag: "OAuthCallbackError", reason: "StateMismatch" })
    expect(user).toMatchObject({ uid, permissions: ["editor", "signin"] })
  })
})
