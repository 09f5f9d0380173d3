import { Directory } from "@civicstack/core-sso"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { it as effectIt } from "@effect/vitest"
import { Duration, Effect, TestClock } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  createSsoGuard,
  type CreateSsoGuardOptions,
  type GuardedRequest,
  makeSsoGuard,
  type SsoPromiseGuard,
  TokenRefused
} from "../src"
import { countingFetch, listen, type LocalServer } from "./support/httpServer"
import { apiTokenFor, applicationAndUser, type ClientApplication, type RealSso, startRealSso } from "./support/realSso"

const MINUTE = 60_000

let sso: RealSso
let application: ClientApplication
let editorToken: { token: string; tokenId: string; uid: string }
let signinOnlyToken: string

beforeAll(async () => {
  sso = await startRealSso()
  ;({ application } = await sso.run(applicationAndUser()))
  editorToken = await sso.run(apiTokenFor(application.name, ["signin", "editor"]))
  signinOnlyToken = (await sso.run(apiTokenFor(application.name, ["signin"]))).token
})
afterAll(() => sso?.close())

const guardWithClock = (options: { cacheTtl?: Duration.DurationInput; maxCachedTokens?: number } = {}) => {
  const clock = { now: 1_700_000_000_000 }
  const { counter, fetch } = countingFetch()
  const guard = createSsoGuard({ baseUrl: sso.url, clientId: application.clientId, fetch, now: () => clock.now, ...options })
  return { guard, clock, counter }
}

const freshToken = () => sso.run(apiTokenFor(application.name, ["signin", "editor"]))

describe("guard.verify", () => {
  it("answers with the token's user, and asks the SSO once within the cache's lifetime, a minute by default", async () => {
    const { clock, counter, guard } = guardWithClock()
    const user = await guard.verify(`Bearer ${editorToken.token}`)
    expect(user).toMatchObject({ uid: editorToken.uid, permissions: ["editor", "signin"] })
    clock.now += MINUTE - 1
    expect(await guard.verify(`bearer ${editorToken.token}`)).toEqual(user)
    expect(counter.userRequests).toBe(1)
    clock.now += 1
    await guard.verify(`Bearer ${editorToken.token}`)
    expect(counter.userRequests).toBe(2)
    await guard.close()
  })

  it("never believes a token past its expiry, however long the cache", async () => {
    const { clock, counter, guard } = guardWithClock({ cacheTtl: "5 minutes" })
    const shortLived = await sso.run(Effect.flatMap(Directory, (directory) =>
      directory.issueApiToken(editorToken.uid, application.name, { expiresIn: Duration.seconds(60) })))
    await guard.verify(`Bearer ${shortLived.token}`)
    clock.now += 58_000
    await guard.verify(`Bearer ${shortLived.token}`)
    expect(counter.userRequests).toBe(1)
    // past the token's expiry by this guard's clock: the SSO is asked again (and, by its own clock, still accepts it)
    clock.now += 2_000
    await guard.verify(`Bearer ${shortLived.token}`)
    expect(counter.userRequests).toBe(2)
    await guard.close()
  })

  it("refuses a refused token again for 5 seconds without asking, then asks", async () => {
    const { clock, counter, guard } = guardWithClock()
    const unknown = `Bearer ${"1".repeat(32)}`
    for (let attempt = 0; attempt < 50; attempt++) {
      await expect(guard.verify(unknown)).rejects.toMatchObject({ reason: "InvalidToken" })
    }
    expect(counter.userRequests).toBe(1)
    clock.now += 5000
    await expect(guard.verify(unknown)).rejects.toMatchObject({ reason: "InvalidToken" })
    expect(counter.userRequests).toBe(2)
    await guard.close()
  })

  it("forgets a user's cached tokens when told, as a push about them does", async () => {
    const { counter, guard } = guardWithClock()
    await guard.verify(`Bearer ${editorToken.token}`)
    guard.forgetUser(editorToken.uid)
    await guard.verify(`Bearer ${editorToken.token}`)
    expect(counter.userRequests).toBe(2)
    await guard.close()
  })

  it("requires this application's clientId", () => {
    expect(() => createSsoGuard({ baseUrl: sso.url } as CreateSsoGuardOptions)).toThrow(/clientId/)
  })

  it("asks the SSO once for a burst of requests with a new token, and each refused request gets its refusal", async () => {
    const { counter, guard } = guardWithClock()
    const token = await freshToken()
    const users = await Promise.all(Array.from({ length: 20 }, () => guard.verify(`Bearer ${token.token}`)))
    expect(new Set(users.map((user) => user.uid))).toEqual(new Set([token.uid]))
    expect(counter.userRequests).toBe(1)
    const refusals = await Promise.allSettled(Array.from({ length: 5 }, () => guard.verify(`Bearer ${"0".repeat(32)}`)))
    expect(refusals.map((refusal) => refusal.status)).toEqual(Array(5).fill("rejected"))
    expect(counter.userRequests).toBe(2)
    await guard.close()
  })

  it("keeps a revoked token valid at most for the lifetime of the cache", async () => {
    const { clock, guard } = guardWithClock({ cacheTtl: "2 minutes" })
    const revoked = await freshToken()
    await guard.verify(`Bearer ${revoked.token}`)
    await sso.run(Effect.flatMap(Directory, (directory) => directory.revokeToken(revoked.tokenId)))
    clock.now += 2 * MINUTE - 1
    await expect(guard.verify(`Bearer ${revoked.token}`)).resolves.toMatchObject({ uid: revoked.uid })
    clock.now += 1
    await expect(guard.verify(`Bearer ${revoked.token}`)).rejects.toMatchObject({ _tag: "TokenRefused", reason: "InvalidToken" })
    await guard.close()
  })

  it("never caches for longer than 5 minutes, whatever it is asked", async () => {
    const { clock, counter, guard } = guardWithClock({ cacheTtl: "1 hour" })
    await guard.verify(`Bearer ${editorToken.token}`)
    clock.now += 5 * MINUTE
    await guard.verify(`Bearer ${editorToken.token}`)
    expect(counter.userRequests).toBe(2)
    await guard.close()
  })

  it("remembers a bounded number of tokens, dropping the least recently used", async () => {
    const { counter, guard } = guardWithClock({ maxCachedTokens: 1 })
    const other = await freshToken()
    await guard.verify(`Bearer ${editorToken.token}`)
    await guard.verify(`Bearer ${editorToken.token}`)
    expect(counter.userRequests).toBe(1)
    await guard.verify(`Bearer ${other.token}`)
    await guard.verify(`Bearer ${editorToken.token}`)
    expect(counter.userRequests).toBe(3)
    await guard.close()
  })

  it("refuses a missing, malformed or unknown token, a token of another application, and a missing permission", async () => {
    const { guard } = guardWithClock()
    await expect(guard.verify(undefined)).rejects.toMatchObject({ reason: "MissingToken" })
    await expect(guard.verify(`Basic ${editorToken.token}`)).rejects.toMatchObject({ reason: "MissingToken" })
    await expect(guard.verify("Bearer " + "0".repeat(32))).rejects.toMatchObject({ reason: "InvalidToken" })
    const elsewhere = await sso.run(applicationAndUser())
    const foreign = await sso.run(apiTokenFor(elsewhere.application.name, ["signin"]))
    await expect(guard.verify(`Bearer ${foreign.token}`)).rejects.toMatchObject({ reason: "InvalidToken" })
    const refused = guard.verify(`Bearer ${signinOnlyToken}`, { permission: "editor" })
    await expect(refused).rejects.toBeInstanceOf(TokenRefused)
    await expect(refused).rejects.toMatchObject({ reason: "MissingPermission", status: 403 })
    await guard.close()
  })

  it("an SSO that cannot be reached neither accepts nor refuses: 503", async () => {
    const guard = createSsoGuard({ baseUrl: "http://127.0.0.1:9", clientId: application.clientId })
    await expect(guard.verify(`Bearer ${editorToken.token}`)).rejects.toMatchObject({ reason: "SsoUnavailable", status: 503 })
    await guard.close()
  })
})

describe("the guard in node:http and as Express-style middleware", () => {
  let guard: SsoPromiseGuard
  let plain: LocalServer
  let express: LocalServer
  beforeAll(async () => {
    guard = createSsoGuard({ baseUrl: sso.url, clientId: application.clientId })
    plain = await listen(async (request, response) => {
      const user = await guard.authenticate(request, response, { permission: "editor" })
      if (user !== undefined) response.end(JSON.stringify({ hello: user.uid }))
    })
    const middleware = guard.middleware({ permission: "editor" })
    express = await listen((request, response) =>
      middleware(request, response, (error) => {
        if (error !== undefined) throw error
        response.end(JSON.stringify({ hello: (request as typeof request & GuardedRequest).ssoUser?.uid }))
      }))
  })
  afterAll(async () => {
    await plain?.close()
    await express?.close()
    await guard?.close()
  })

  for (const [label, server] of [["node:http", () => plain], ["middleware", () => express]] as const) {
    it(`${label}: passes a good token on with its user, 401 with WWW-Authenticate without one, 403 without the permission`, async () => {
      const { url } = server()
      const passed = await fetch(url, { headers: { authorization: `Bearer ${editorToken.token}` } })
      expect(passed.status).toBe(200)
      expect(await passed.json()).toEqual({ hello: editorToken.uid })

      const missing = await fetch(url)
      expect(missing.status).toBe(401)
      expect(missing.headers.get("www-authenticate")).toBe("Bearer")
      expect(missing.headers.get("content-type")).toBe("application/json; charset=utf-8")
      expect(await missing.json()).toEqual({ error: expect.any(String) })

      const invalid = await fetch(url, { headers: { authorization: `Bearer ${"0".repeat(32)}` } })
      expect(invalid.status).toBe(401)
      expect(invalid.headers.get("www-authenticate")).toMatch(/^Bearer error="invalid_token"/)

      const forbidden = await fetch(url, { headers: { authorization: `Bearer ${signinOnlyToken}` } })
      expect(forbidden.status).toBe(403)
      expect(await forbidden.json()).toEqual({ error: expect.stringContaining("editor") })
    })
  }
})

describe("the guard with Effect", () => {
  effectIt.effect("reads Effect's Clock, so TestClock moves its cache forward", () =>
    Effect.gen(function*() {
      const { counter, fetch } = countingFetch()
      const guard = yield* makeSsoGuard({ baseUrl: sso.url, clientId: application.clientId, cacheTtl: "1 minute" }).pipe(
        Effect.provide(FetchHttpClient.layer),
        Effect.provideService(FetchHttpClient.Fetch, fetch)
      )
      const first = yield* guard.verify(`Bearer ${editorToken.token}`)
      yield* TestClock.adjust("59 seconds")
      yield* guard.verify(`Bearer ${editorToken.token}`)
      expect(counter.userRequests).toBe(1)
      yield* TestClock.adjust("1 second")
      yield* guard.verify(`Bearer ${editorToken.token}`)
      expect(counter.userRequests).toBe(2)
      expect(first.uid).toBe(editorToken.uid)
      const refusal = yield* Effect.flip(guard.verify(undefined))
      expect(refusal.status).toBe(401)
    }))
})
