import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from "jose"
import type { JWK } from "jose"
import { layerMemory } from "../../src/layers"
import { OAuthServer } from "../../src/services/OAuthServer"
import { basic, codeFor, exchangeCode, origin, publisherAndAda } from "../fixtures/harness"

const sso = () => layerMemory({ issuer: "https://sso.example" })

const verify = (idToken: string, keys: ReadonlyArray<Record<string, unknown>>, clientId: string, at: Date) =>
  Effect.promise(() =>
    jwtVerify(idToken, createLocalJWKSet({ keys: keys as Array<JWK> }), {
      issuer: "https://sso.example",
      audience: clientId,
      algorithms: ["RS256"],
      currentDate: at
    })
  )

describe("OpenID Connect", () => {
  it.effect("the openid scope adds an RS256 id_token with nonce, aud, azp and auth_time, checked against the JWKS", () =>
    Effect.gen(function*() {
      const { ada, clientId, clientSecret } = yield* publisherAndAda
      yield* TestClock.adjust("1000 seconds")
      const tokens = yield* exchangeCode(
        clientId,
        clientSecret,
        yield* codeFor(clientId, { scope: "openid email profile", nonce: "n-0S6_WzA2Mj" })
      )
      expect(tokens.scope).toBe("openid email profile")
      const server = yield* OAuthServer
      const { keys } = yield* server.jwks
      expect(keys).toHaveLength(1)
      expect(keys[0]).not.toHaveProperty("d")
      const { payload } = yield* verify(tokens.id_token!, keys, clientId, new Date(1_000_000))
      expect(payload).toMatchObject({
        sub: ada.uid,
        aud: clientId,
        azp: clientId,
        nonce: "n-0S6_WzA2Mj",
        auth_time: 0,
        name: "Ada",
        email: "ada@example.com",
        iat: 1000,
        exp: 1000 + 7200
      })
      const claims = yield* server.userInfo(`Bearer ${tokens.access_token}`)
      expect(claims).toEqual({ sub: ada.uid, name: "Ada", email: "ada@example.com" })
    }).pipe(Effect.provide(sso())))

  it.effect("without the openid scope there is no id_token, and userinfo refuses the token", () =>
    Effect.gen(function*() {
      const { clientId, clientSecret } = yield* publisherAndAda
      const tokens = yield* exchangeCode(clientId, clientSecret, yield* codeFor(clientId))
      expect(tokens.id_token).toBeUndefined()
      const refused = yield* Effect.flip((yield* OAuthServer).userInfo(`Bearer ${tokens.access_token}`))
      expect(refused).toMatchObject({ _tag: "InvalidToken" })
    }).pipe(Effect.provide(sso())))

  it.effect("a refresh gives a new id_token without the nonce", () =>
    Effect.gen(function*() {
      const { clientId, clientSecret } = yield* publisherAndAda
      const first = yield* exchangeCode(clientId, clientSecret, yield* codeFor(clientId, { scope: "openid", nonce: "abc" }))
      const server = yield* OAuthServer
      const refreshed = yield* server.exchange(
        { grant_type: "refresh_token", refresh_token: first.refresh_token },
        origin(basic(clientId, clientSecret))
      )
      const { payload } = yield* verify(refreshed.id_token!, (yield* server.jwks).keys, clientId, new Date(0))
      expect(payload.nonce).toBeUndefined()
      expect(payload.auth_time).toBe(0)
    }).pipe(Effect.provide(sso())))

  it.effect("after a key rotation the old public key stays published until its tokens have expired", () =>
    Effect.gen(function*() {
      const { clientId, clientSecret } = yield* publisherAndAda
      const server = yield* OAuthServer
      const before = yield* exchangeCode(clientId, clientSecret, yield* codeFor(clientId, { scope: "openid" }))
      const oldKid = decodeProtectedHeader(before.id_token!).kid
      const newKid = yield* server.rotateSigningKey
      const after = yield* exchangeCode(clientId, clientSecret, yield* codeFor(clientId, { scope: "openid" }))
      expect(decodeProtectedHeader(after.id_token!).kid).toBe(newKid)
      expect((yield* server.jwks).keys.map((key) => key["kid"]).sort()).toEqual([oldKid, newKid].sort())
      yield* verify(before.id_token!, (yield* server.jwks).keys, clientId, new Date(0))
      yield* TestClock.adjust("7200 seconds")
      expect((yield* server.jwks).keys.map((key) => key["kid"])).toEqual([newKid])
    }).pipe(Effect.provide(sso())))
})
