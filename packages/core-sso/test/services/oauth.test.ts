import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Option, TestClock } from "effect"
import { layerMemory } from "../../src/layers"
import { Authorization } from "../../src/services/Authorization"
import { Directory } from "../../src/services/Directory"
import { OAuthServer } from "../../src/services/OAuthServer"
import {
  authorizeQuery,
  basic,
  codeFor,
  exchangeCode,
  origin,
  publisherAndAda,
  REDIRECT_URI,
  refreshWith,
  userWith
} from "../fixtures/harness"

const sso = () => layerMemory({ passwordHashConcurrency: 2 })

const errorOf = <A, E>(effect: Effect.Effect<A, E, OAuthServer | Directory | Authorization>) =>
  Effect.map(Effect.either(effect), (result) => Either.getLeft(result).pipe(Option.getOrThrow))

describe("OAuthServer", () => {
  it.effect("exchanges a code for tokens whose user details carry this application's permissions", () =>
    Effect.gen(function*() {
      const { ada, clientId, clientSecret } = yield* publisherAndAda
      const tokens = yield* exchangeCode(clientId, clientSecret, yield* codeFor(clientId))
      expect(tokens).toMatchObject({ token_type: "Bearer", expires_in: 7200 })
      expect(tokens.access_token).toMatch(/^[0-9a-f]{32}$/)
      expect(tokens.refresh_token).toMatch(/^[0-9a-f]{32}$/)
      const { user } = yield* userWith(tokens.access_token)
      expect(user).toEqual({
        uid: ada.uid,
        name: "Ada",
        email: "ada@example.com",
        permissions: ["editor", "signin"],
        organisation_slug: null,
        organisation_content_id: null,
        disabled: false
      })
    }).pipe(Effect.provide(sso())))

  it.effect("an access token works until 7200 seconds have passed", () =>
    Effect.gen(function*() {
      const { clientId, clientSecret } = yield* publisherAndAda
      const tokens = yield* exchangeCode(clientId, clientSecret, yield* codeFor(clientId))
      yield* TestClock.adjust("7199 seconds")
      yield* userWith(tokens.access_token)
      yield* TestClock.adjust("1 second")
      const expired = yield* errorOf(userWith(tokens.access_token))
      expect(expired).toMatchObject({ _tag: "InvalidToken", error_description: "The access token has expired" })
    }).pipe(Effect.provide(sso())))

  it.effect("answers from memory as user answers, and not at all for a token user refuses", () =>
    Effect.gen(function*() {
      const { ada, clientId, clientSecret } = yield* publisherAndAda
      const tokens = yield* exchangeCode(clientId, clientSecret, yield* codeFor(clientId))
      const server = yield* OAuthServer
      const bearer = `Bearer ${tokens.access_token}`
      expect(server.userFromMemory(bearer, undefined)).toEqual(yield* userWith(tokens.access_token))
      expect(server.userFromMemory(bearer, clientId)).toEqual(yield* userWith(tokens.access_token))
      expect(server.userFromMemory(bearer, "another-client")).toBeUndefined()
      expect(server.userFromMemory(undefined, undefined)).toBeUndefined()
      expect(server.userFromMemory("Bearer not-a-token", undefined)).toBeUndefined()
      // expiry is read from the TestClock, as user reads it
      yield* TestClock.adjust("7200 seconds")
      expect(server.userFromMemory(bearer, undefined)).toBeUndefined()
      const fresh = yield* exchangeCode(clientId, clientSecret, yield* codeFor(clientId))
      yield* (yield* Directory).setPermissions(ada.uid, "Publisher", ["editor"])
      expect(server.userFromMemory(`Bearer ${fresh.access_token}`, undefined)).toBeUndefined()
    }).pipe(Effect.provide(sso())))

  it.effect("a code can be used once; its second use revokes the tokens it gave", () =>
    Effect.gen(function*() {
      const { clientId, clientSecret } = yield* publisherAndAda
      const code = yield* codeFor(clientId)
      const tokens = yield* exchangeCode(clientId, clientSecret, code)
      const replay = yield* errorOf(exchangeCode(clientId, clientSecret, code))
      expect(replay).toMatchObject({ _tag: "OAuthRequestRefused", error: "invalid_grant" })
      expect(yield* errorOf(userWith(tokens.access_token))).toMatchObject({ _tag: "InvalidToken" })
      const server = yield* OAuthServer
      const refreshed = yield* errorOf(server.exchange({
        grant_type: "refresh_token",
        refresh_token: tokens.refresh_token,
        client_id: clientId,
        client_secret: clientSecret
      }, origin()))
      expect(refreshed).toMatchObject({ error: "invalid_grant" })
    }).pipe(Effect.provide(sso())))

  it.effect("a code expires after 10 minutes", () =>
    Effect.gen(function*() {
      const { clientId, clientSecret } = yield* publisherAndAda
      const code = yield* codeFor(clientId)
      yield* TestClock.adjust("10 minutes")
      expect(yield* errorOf(exchangeCode(clientId, clientSecret, code))).toMatchObject({
        error: "invalid_grant",
        error_description: "The authorization code has expired"
      })
    }).pipe(Effect.provide(sso())))

  it.effect("PKCE: a missing verifier is invalid_request, a wrong one invalid_grant", () =>
    Effect.gen(function*() {
      const { clientId, clientSecret } = yield* publisherAndAda
      expect(yield* errorOf(exchangeCode(clientId, clientSecret, yield* codeFor(clientId), null))).toMatchObject({
        error: "invalid_request",
        error_description: "The code_verifier parameter is required"
      })
      const wrong = "another-verifier-that-is-long-enough-to-be-valid-0123456789"
      expect(yield* errorOf(exchangeCode(clientId, clientSecret, yield* codeFor(clientId), wrong))).toMatchObject({
        error: "invalid_grant"
      })
    }).pipe(Effect.provide(sso())))

  it.effect("a redirect_uri other than the request's is invalid_grant", () =>
    Effect.gen(function*() {
      const { clientId, clientSecret } = yield* publisherAndAda
      const server = yield* OAuthServer
      const refused = yield* errorOf(server.exchange({
        grant_type: "authorization_code",
        code: yield* codeFor(clientId),
        redirect_uri: `${REDIRECT_URI}/other`,
        client_id: clientId,
        client_secret: clientSecret
      }, origin()))
      expect(refused).toMatchObject({ error: "invalid_grant" })
    }).pipe(Effect.provide(sso())))

  it.effect("refresh rotates the refresh token; reusing a rotated one revokes the whole chain", () =>
    Effect.gen(function*() {
      const { clientId, clientSecret } = yield* publisherAndAda
      const first = yield* exchangeCode(clientId, clientSecret, yield* codeFor(clientId))
      const refresh = (token: string) => refreshWith(clientId, clientSecret, token)
      const second = yield* refresh(first.refresh_token)
      expect(second.refresh_token).not.toBe(first.refresh_token)
      yield* userWith(second.access_token)
      const third = yield* refresh(second.refresh_token)
      expect(yield* errorOf(refresh(first.refresh_token))).toMatchObject({ error: "invalid_grant" })
      expect(yield* errorOf(userWith(third.access_token))).toMatchObject({ _tag: "InvalidToken" })
      expect(yield* errorOf(refresh(third.refresh_token))).toMatchObject({ error: "invalid_grant" })
    }).pipe(Effect.provide(sso())))

  it.effect("a refresh token chain ends 90 days after the sign-in that began it, however often it is refreshed", () =>
    Effect.gen(function*() {
      const { clientId, clientSecret } = yield* publisherAndAda
      const server = yield* OAuthServer
      const refresh = (token: string) => refreshWith(clientId, clientSecret, token)
      let tokens = yield* exchangeCode(clientId, clientSecret, yield* codeFor(clientId))
      for (let month = 0; month < 2; month++) {
        yield* TestClock.adjust("30 days")
        tokens = yield* refresh(tokens.refresh_token)
      }
      yield* TestClock.adjust("30 days")
      const introspected = yield* server.introspect({ token: tokens.refresh_token }, origin(basic(clientId, clientSecret)))
      expect(introspected).toEqual({ active: false })
      expect(yield* errorOf(refresh(tokens.refresh_token))).toMatchObject({
        error: "invalid_grant",
        error_description: "The refresh token has expired; sign in again"
      })
    }).pipe(Effect.provide(sso())))

  it.effect("a password change revokes the tokens got by signing in", () =>
    Effect.gen(function*() {
      const { ada, clientId, clientSecret } = yield* publisherAndAda
      const signedIn = yield* exchangeCode(clientId, clientSecret, yield* codeFor(clientId))
      yield* (yield* Directory).setPassword(ada.uid, "a brand new password for Ada")
      expect(yield* errorOf(userWith(signedIn.access_token))).toMatchObject({ _tag: "InvalidToken" })
      const refreshed = refreshWith(clientId, clientSecret, signedIn.refresh_token)
      expect(yield* errorOf(refreshed)).toMatchObject({ error: "invalid_grant" })
    }).pipe(Effect.provide(sso())))

  it.effect("issues API tokens to API users only", () =>
    Effect.gen(function*() {
      const { ada } = yield* publisherAndAda
      const directory = yield* Directory
      expect(yield* errorOf(directory.issueApiToken(ada.uid, "Publisher"))).toMatchObject({ _tag: "InvalidInput", field: "user" })
      const bot = yield* directory.createUser({ email: "bot@example.com", name: "Bot", apiUser: true })
      yield* directory.setPermissions(bot.user.uid, "Publisher", ["signin"])
      const issued = yield* directory.issueApiToken(bot.user.uid, "Publisher")
      expect((yield* userWith(issued.token)).user.email).toBe("bot@example.com")
    }).pipe(Effect.provide(sso())))

  it.effect("a refresh refused for a lost signin permission leaves the token usable once it is given back", () =>
    Effect.gen(function*() {
      const { ada, clientId, clientSecret } = yield* publisherAndAda
      const directory = yield* Directory
      const first = yield* exchangeCode(clientId, clientSecret, yield* codeFor(clientId))
      const refresh = (token: string) => refreshWith(clientId, clientSecret, token)
      yield* directory.setPermissions(ada.uid, "Publisher", ["editor"])
      expect(yield* errorOf(refresh(first.refresh_token))).toMatchObject({
        error: "invalid_grant",
        error_description: "The user does not have permission to sign in to this application"
      })
      yield* directory.setPermissions(ada.uid, "Publisher", ["signin"])
      const second = yield* refresh(first.refresh_token)
      yield* userWith(second.access_token)
      expect(yield* errorOf(refresh("not-a-token"))).toMatchObject({ error_description: "The refresh token is not valid" })
    }).pipe(Effect.provide(sso())))

  it.effect("client authentication: body or Basic, not both; a wrong secret is invalid_client", () =>
    Effect.gen(function*() {
      const { clientId, clientSecret } = yield* publisherAndAda
      const server = yield* OAuthServer
      const both = yield* errorOf(server.exchange(
        { grant_type: "refresh_token", refresh_token: "x", client_id: clientId, client_secret: clientSecret },
        origin(basic(clientId, clientSecret))
      ))
      expect(both).toMatchObject({ _tag: "OAuthRequestRefused", error: "invalid_request" })
      const none = yield* errorOf(server.exchange({ grant_type: "refresh_token", refresh_token: "x" }, origin()))
      expect(none).toMatchObject({ _tag: "OAuthClientRefused", error: "invalid_client" })
      const wrong = yield* errorOf(server.exchange(
        { grant_type: "refresh_token", refresh_token: "x" },
        origin(basic(clientId, "0".repeat(32)))
      ))
      expect(wrong).toMatchObject({ _tag: "OAuthClientRefused", error: "invalid_client" })
      const unsupported = yield* errorOf(server.exchange({ grant_type: "password" }, origin(basic(clientId, clientSecret))))
      expect(unsupported).toMatchObject({ error: "unsupported_grant_type" })
      const noGrantType = yield* errorOf(server.exchange({}, origin(basic(clientId, clientSecret))))
      expect(noGrantType).toMatchObject({ error: "invalid_request", error_description: "The grant_type parameter is required" })
    }).pipe(Effect.provide(sso())))

  it.effect("after 10 failed authentications of a client from one address, that address waits; the window slides", () =>
    Effect.gen(function*() {
      const { clientId, clientSecret } = yield* publisherAndAda
      const server = yield* OAuthServer
      const attempt = (secret: string, address: string) =>
        server.exchange({ grant_type: "refresh_token", refresh_token: "x" }, origin(basic(clientId, secret), address))
      for (let failure = 0; failure < 10; failure++) {
        yield* TestClock.adjust("10 seconds")
        expect(yield* errorOf(attempt("f".repeat(32), "198.51.100.1"))).toMatchObject({ error: "invalid_client" })
      }
      const throttled = yield* errorOf(attempt(clientSecret, "198.51.100.1"))
      expect(throttled).toMatchObject({ _tag: "OAuthThrottled", retry_after_seconds: 510 })
      // the client's own server, elsewhere, is not held up by a stranger's guesses
      expect(yield* errorOf(attempt(clientSecret, "203.0.113.9"))).toMatchObject({ error: "invalid_grant" })
      yield* TestClock.adjust("510 seconds")
      expect(yield* errorOf(attempt(clientSecret, "198.51.100.1"))).toMatchObject({ error: "invalid_grant" })
    }).pipe(Effect.provide(sso())))

  it.effect("after 30 failures from one address, any client from it waits", () =>
    Effect.gen(function*() {
      const { clientId, clientSecret } = yield* publisherAndAda
      const server = yield* OAuthServer
      for (let failure = 0; failure < 30; failure++) {
        yield* Effect.either(server.exchange({ grant_type: "refresh_token" }, origin(basic(`${failure}`.padStart(32, "0"), "x"))))
      }
      const throttled = yield* errorOf(server.exchange({ grant_type: "refresh_token" }, origin(basic(clientId, clientSecret))))
      expect(throttled).toMatchObject({ _tag: "OAuthThrottled" })
      const elsewhere = yield* errorOf(
        server.exchange({ grant_type: "refresh_token" }, origin(basic(clientId, clientSecret), "192.0.2.200"))
      )
      expect(elsewhere).toMatchObject({ error: "invalid_request" })
    }).pipe(Effect.provide(sso())))

  it.effect("user details: another client's id, a suspended user or a lost signin permission are refused", () =>
    Effect.gen(function*() {
      const { ada, clientId, clientSecret } = yield* publisherAndAda
      const server = yield* OAuthServer
      const directory = yield* Directory
      const tokens = yield* exchangeCode(clientId, clientSecret, yield* codeFor(clientId))
      const other = yield* directory.createApplication({
        name: "Other",
        homeUri: "https://other.example",
        redirectUris: ["https://other.example/cb"]
      })
      expect(yield* errorOf(server.user(origin(`Bearer ${tokens.access_token}`), other.clientId))).toMatchObject({
        error_description: "The access token was not issued to this client"
      })
      yield* server.user(origin(`Bearer ${tokens.access_token}`), clientId)
      yield* directory.setPermissions(ada.uid, "Publisher", ["editor"])
      expect(yield* errorOf(userWith(tokens.access_token))).toMatchObject({
        error_description: "The user does not have permission to sign in to this application"
      })
      expect(yield* errorOf(server.user(origin(basic(clientId, clientSecret)), undefined))).toMatchObject({
        error_description: "No bearer access token was sent"
      })
      yield* directory.setPermissions(ada.uid, "Publisher", ["signin"])
      yield* directory.suspend(ada.uid, "Left the organisation")
      expect(yield* errorOf(userWith(tokens.access_token))).toMatchObject({ _tag: "InvalidToken" })
    }).pipe(Effect.provide(sso())))

  it.effect("revocation and introspection", () =>
    Effect.gen(function*() {
      const { ada, clientId, clientSecret } = yield* publisherAndAda
      const server = yield* OAuthServer
      const tokens = yield* exchangeCode(clientId, clientSecret, yield* codeFor(clientId))
      const client = origin(basic(clientId, clientSecret))
      const introspected = yield* server.introspect({ token: tokens.access_token }, client)
      expect(introspected).toMatchObject({ active: true, sub: ada.uid, username: "ada@example.com", token_type: "Bearer" })
      expect(yield* server.introspect({ token: "0".repeat(32) }, client)).toEqual({ active: false })
      yield* server.revoke({ token: "0".repeat(32) }, client)
      yield* server.revoke({ token: tokens.refresh_token }, client)
      expect(yield* server.introspect({ token: tokens.access_token }, client)).toEqual({ active: false })
      expect(yield* errorOf(server.revoke({}, client))).toMatchObject({ error: "invalid_request" })
    }).pipe(Effect.provide(sso())))
})

describe("Authorization", () => {
  it.effect("an unknown client or redirect_uri is an error page; other problems go back with the state", () =>
    Effect.gen(function*() {
      const { clientId } = yield* publisherAndAda
      const authorization = yield* Authorization
      const signedOut = Option.none()
      expect(yield* authorization.authorize(authorizeQuery("0".repeat(32)), signedOut)).toMatchObject({ _tag: "ErrorPage" })
      expect(yield* authorization.authorize(authorizeQuery(clientId, { redirect_uri: "https://evil.example/cb" }), signedOut))
        .toMatchObject({ _tag: "ErrorPage" })
      const noState = yield* authorization.authorize(authorizeQuery(clientId, { state: undefined }), signedOut)
      expect(noState).toEqual({
        _tag: "Redirect",
        location: `${REDIRECT_URI}?error=invalid_request&error_description=The+state+parameter+is+required`
      })
      const badMethod = yield* authorization.authorize(authorizeQuery(clientId, { code_challenge_method: "plain" }), signedOut)
      expect(badMethod).toMatchObject({ _tag: "Redirect" })
      expect(new URL((badMethod as { location: string }).location).searchParams.get("state")).toBe("the-state")
      expect(yield* authorization.authorize(authorizeQuery(clientId), signedOut)).toMatchObject({ _tag: "SignInRequired" })
    }).pipe(Effect.provide(sso())))

  it.effect("a signed-in user without signin, or suspended, gets no code", () =>
    Effect.gen(function*() {
      const { ada, clientId } = yield* publisherAndAda
      const authorization = yield* Authorization
      const directory = yield* Directory
      yield* directory.setPermissions(ada.uid, "Publisher", ["editor"])
      const noSignin = yield* authorization.authorize(authorizeQuery(clientId), Option.some({ user: (yield* directory.user(ada.uid)).user, authTime: new Date(0) }))
      expect(noSignin).toMatchObject({ _tag: "NoAccess" })
      yield* directory.setPermissions(ada.uid, "Publisher", ["signin"])
      const suspended = (yield* directory.suspend(ada.uid, "reason")).user
      expect(yield* authorization.authorize(authorizeQuery(clientId), Option.some({ user: suspended, authTime: new Date(0) })))
        .toMatchObject({ _tag: "NoAccess", reason: "The user is suspended" })
    }).pipe(Effect.provide(sso())))
})
