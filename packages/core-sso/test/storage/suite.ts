import { describe, expect, it } from "@effect/vitest"
import type { Layer } from "effect"
import { Clock, Effect, Option } from "effect"
import type { AccessToken, Application, EmailLink, Grant, RefreshToken, User } from "../../src/domain/records"
import { accessProblem } from "../../src/domain/access"
import { SsoStore } from "../../src/storage/SsoStore"

const start = new Date("2024-03-01T12:00:00.000Z")
const at = (seconds: number) => new Date(start.getTime() + seconds * 1000)

export const anApplication = (overrides: Partial<Application> = {}): Application => ({
  id: "app-1",
  name: "Publisher",
  description: "Publishes things",
  homeUri: "https://publisher.example",
  redirectUris: ["https://publisher.example/auth/callback"],
  clientIdHash: "client-id-hash-1",
  clientSecretHash: "client-secret-hash-1",
  permissions: ["signin", "editor"],
  pushUpdates: true,
  pushFormat: "seed",
  requirePkce: false,
  requireTwoStep: false,
  retired: false,
  createdAt: start,
  ...overrides
})

export const aUser = (overrides: Partial<User> = {}): User => ({
  uid: "5b0c3f0e-0000-4000-8000-000000000001",
  name: "Ada Lovelace",
  email: "Ada@Example.com",
  passwordHash: "$argon2id$stored",
  isApiUser: false,
  organisationSlug: "analytical-engines",
  organisationContentId: null,
  suspendedAt: null,
  suspensionReason: null,
  failedSignIns: 0,
  lockedUntil: null,
  createdAt: start,
  ...overrides
})

const aGrant = (overrides: Partial<Grant> = {}): Grant => ({
  codeHash: "code-hash-1",
  applicationId: "app-1",
  userUid: aUser().uid,
  redirectUri: "https://publisher.example/auth/callback",
  codeChallenge: "challenge",
  scopes: ["openid", "email"],
  nonce: "n-1",
  authTime: start,
  createdAt: start,
  expiresAt: at(600),
  usedAt: null,
  ...overrides
})

const anAccessToken = (overrides: Partial<AccessToken> = {}): AccessToken => ({
  id: "access-1",
  tokenHash: "access-hash-1",
  kind: "oauth",
  applicationId: "app-1",
  userUid: aUser().uid,
  scopes: [],
  grantCodeHash: "code-hash-1",
  chainId: "chain-1",
  createdAt: start,
  expiresAt: at(7200),
  revokedAt: null,
  ...overrides
})

const aRefreshToken = (overrides: Partial<RefreshToken> = {}): RefreshToken => ({
  id: "refresh-1",
  tokenHash: "refresh-hash-1",
  applicationId: "app-1",
  userUid: aUser().uid,
  scopes: [],
  grantCodeHash: "code-hash-1",
  chainId: "chain-1",
  authTime: start,
  createdAt: start,
  usedAt: null,
  revokedAt: null,
  ...overrides
})

/** An application and a user, which most records refer to. */
const withApplicationAndUser = Effect.gen(function*() {
  const store = yield* SsoStore
  yield* store.insertApplication(anApplication())
  yield* store.insertUser(aUser())
  return store
})

/** A refresh token of app-1 (scopes `openid email`) whose user holds `permissions` there. */
const refreshToken = (overrides: Partial<RefreshToken> = {}) => aRefreshToken({ scopes: ["openid", "email"], ...overrides })

const withRefreshToken = (permissions: ReadonlyArray<string>, overrides: Partial<RefreshToken> = {}) =>
  Effect.gen(function*() {
    const store = yield* withApplicationAndUser
    yield* store.setPermissions(aUser().uid, "app-1", permissions)
    yield* store.insertRefreshToken(refreshToken(overrides))
    return store
  })

/** The exchange of refresh-hash-1 by app-1 at `now`, for successors numbered `n`. */
const exchange = (n: number, now: Date) => ({
  tokenHash: "refresh-hash-1",
  application: anApplication(),
  now,
  accessToken: { id: `access-next-${n}`, tokenHash: `access-next-${n}`, expiresAt: new Date(now.getTime() + 3_600_000) },
  refreshToken: { id: `refresh-next-${n}`, tokenHash: `refresh-next-${n}` }
})

/** The behaviour every adapter of `SsoStore` shares: run against memory, PGlite and PostgreSQL. */
export const ssoStoreSuite = (name: string, backend: () => Layer.Layer<SsoStore, unknown>) =>
  describe(`SsoStore on ${name}`, () => {
    const test = (title: string, body: Effect.Effect<void, unknown, SsoStore>) =>
      it.effect(title, () => Effect.provide(body, backend()))

    test("stores applications and finds them by id, name and client id hash", Effect.gen(function*() {
      const store = yield* SsoStore
      yield* store.insertApplication(anApplication())
      yield* store.insertApplication(anApplication({ id: "app-2", name: "Alerts", clientIdHash: "client-id-hash-2" }))
      expect(Option.getOrThrow(yield* store.applicationById("app-1"))).toEqual(anApplication())
      expect(Option.getOrThrow(yield* store.applicationByName("Alerts")).id).toBe("app-2")
      expect(Option.getOrThrow(yield* store.applicationByClientIdHash("client-id-hash-1")).name).toBe("Publisher")
      expect(yield* store.applicationByName("publisher")).toEqual(Option.none())
      expect(yield* store.applicationByName("bad\u0000name")).toEqual(Option.none())
      expect((yield* store.listApplications).map((application) => application.name)).toEqual(["Alerts", "Publisher"])
    }))

    test("refuses a second application with a taken name or client id", Effect.gen(function*() {
      const store = yield* SsoStore
      yield* store.insertApplication(anApplication())
      const sameName = yield* Effect.flip(store.insertApplication(anApplication({ id: "app-2", clientIdHash: "other" })))
      expect(sameName).toMatchObject({ _tag: "AlreadyTaken", field: "name" })
      const sameClient = yield* Effect.flip(store.insertApplication(anApplication({ id: "app-2", name: "Other" })))
      expect(sameClient).toMatchObject({ _tag: "AlreadyTaken", field: "client_id" })
      expect(yield* store.listApplications).toHaveLength(1)
    }))

    test("updates an application in place", Effect.gen(function*() {
      const store = yield* SsoStore
      yield* store.insertApplication(anApplication())
      yield* store.insertApplication(anApplication({ id: "app-2", name: "Alerts", clientIdHash: "client-id-hash-2" }))
      const changed = anApplication({
        redirectUris: ["https://publisher.example/new"],
        retired: true,
        pushFormat: "gds-sso",
        requireTwoStep: true
      })
      yield* store.updateApplication(changed)
      expect(Option.getOrThrow(yield* store.applicationById("app-1"))).toEqual(changed)
      const clash = yield* Effect.flip(store.updateApplication(anApplication({ name: "Alerts" })))
      expect(clash).toMatchObject({ _tag: "AlreadyTaken", field: "name" })
    }))

    test("a uid or id no record can have (with a NUL) finds and changes nothing", Effect.gen(function*() {
      const store = yield* SsoStore
      yield* store.insertUser(aUser())
      const nul = `${aUser().uid}\u0000`
      expect(yield* store.userByUid(nul)).toEqual(Option.none())
      expect(yield* store.updateUser(nul, { name: "X" })).toEqual(Option.none())
      expect(yield* store.setSuspension(nul, { at: at(1), reason: "x" })).toEqual(Option.none())
      expect(yield* store.setSuspension(nul, null)).toEqual(Option.none())
      expect(yield* store.recordFailedSignIn(nul, { at: at(1), lockAfter: 1, lockUntil: at(2) })).toEqual(Option.none())
      expect(yield* store.clearFailedSignIns(nul)).toEqual(Option.none())
      expect(yield* store.applicationById("app\u0000")).toEqual(Option.none())
      expect(Option.getOrThrow(yield* store.userByUid(aUser().uid))).toEqual(aUser())
    }))

    test("finds users by uid and by email in any case; an email is taken in any case", Effect.gen(function*() {
      const store = yield* SsoStore
      yield* store.insertUser(aUser())
      expect(Option.getOrThrow(yield* store.userByUid(aUser().uid))).toEqual(aUser())
      expect(Option.getOrThrow(yield* store.userByEmail("ada@EXAMPLE.com")).uid).toBe(aUser().uid)
      expect(yield* store.userByEmail("nobody@example.com")).toEqual(Option.none())
      const taken = yield* Effect.flip(store.insertUser(aUser({ uid: "other", email: "ADA@example.COM" })))
      expect(taken).toMatchObject({ _tag: "AlreadyTaken", field: "email" })
      expect(yield* store.listUsers).toHaveLength(1)
    }))

    test("changes a user's name and email, refusing an email another user has", Effect.gen(function*() {
      const store = yield* SsoStore
      yield* store.insertUser(aUser())
      yield* store.insertUser(aUser({ uid: "grace", email: "grace@example.com", name: "Grace" }))
      const renamed = yield* store.updateUser(aUser().uid, { name: "Ada King", organisationSlug: null })
      expect(Option.getOrThrow(renamed)).toMatchObject({ name: "Ada King", email: "Ada@Example.com", organisationSlug: null })
      const clash = yield* Effect.flip(store.updateUser(aUser().uid, { email: "GRACE@example.com" }))
      expect(clash).toMatchObject({ _tag: "AlreadyTaken", field: "email" })
      expect(yield* store.updateUser("nobody", { name: "x" })).toEqual(Option.none())
    }))

    test("suspends and unsuspends", Effect.gen(function*() {
      const store = yield* SsoStore
      yield* store.insertUser(aUser())
      const suspended = Option.getOrThrow(yield* store.setSuspension(aUser().uid, { at: at(5), reason: "left" }))
      expect(suspended).toMatchObject({ suspendedAt: at(5), suspensionReason: "left" })
      const back = Option.getOrThrow(yield* store.setSuspension(aUser().uid, null))
      expect(back).toMatchObject({ suspendedAt: null, suspensionReason: null })
    }))

    test("locks an account at the nth wrong password in a row, and unlocks it", Effect.gen(function*() {
      const store = yield* SsoStore
      yield* store.insertUser(aUser())
      const lock = { at: at(0), lockAfter: 3, lockUntil: at(3600) }
      yield* store.recordFailedSignIn(aUser().uid, lock)
      const second = Option.getOrThrow(yield* store.recordFailedSignIn(aUser().uid, lock))
      expect(second).toMatchObject({ failedSignIns: 2, lockedUntil: null })
      const third = Option.getOrThrow(yield* store.recordFailedSignIn(aUser().uid, lock))
      expect(third).toMatchObject({ failedSignIns: 3, lockedUntil: at(3600) })
      const cleared = Option.getOrThrow(yield* store.clearFailedSignIns(aUser().uid))
      expect(cleared).toMatchObject({ failedSignIns: 0, lockedUntil: null })
    }))

    test("counts again from one once a lock has ended", Effect.gen(function*() {
      const store = yield* SsoStore
      yield* store.insertUser(aUser())
      const lock = { at: at(0), lockAfter: 2, lockUntil: at(3600) }
      yield* store.recordFailedSignIn(aUser().uid, lock)
      yield* store.recordFailedSignIn(aUser().uid, lock)
      const afterLock = { at: at(3600), lockAfter: 2, lockUntil: at(7200) }
      const first = Option.getOrThrow(yield* store.recordFailedSignIn(aUser().uid, afterLock))
      expect(first).toMatchObject({ failedSignIns: 1, lockedUntil: null })
      const second = Option.getOrThrow(yield* store.recordFailedSignIn(aUser().uid, afterLock))
      expect(second).toMatchObject({ failedSignIns: 2, lockedUntil: at(7200) })
    }))

    test("keeps a user's permissions per application, sorted and distinct", Effect.gen(function*() {
      const store = yield* withApplicationAndUser
      yield* store.setPermissions(aUser().uid, "app-1", ["signin", "editor", "signin"])
      expect(yield* store.permissionsOf(aUser().uid)).toEqual([{ applicationId: "app-1", permissions: ["editor", "signin"] }])
      yield* store.setPermissions(aUser().uid, "app-1", ["signin"])
      expect(yield* store.permissionsOf(aUser().uid)).toEqual([{ applicationId: "app-1", permissions: ["signin"] }])
      yield* store.setPermissions(aUser().uid, "app-1", [])
      expect(yield* store.permissionsOf(aUser().uid)).toEqual([])
    }))

    test("uses a code once; a second use finds it used", Effect.gen(function*() {
      const store = yield* withApplicationAndUser
      yield* store.insertGrant(aGrant())
      const first = Option.getOrThrow(yield* store.useGrant("code-hash-1", at(10)))
      expect(first).toEqual({ record: aGrant({ usedAt: at(10) }), firstUse: true })
      const second = Option.getOrThrow(yield* store.useGrant("code-hash-1", at(20)))
      expect(second).toEqual({ record: aGrant({ usedAt: at(10) }), firstUse: false })
      expect(yield* store.useGrant("unknown", at(20))).toEqual(Option.none())
    }))

    test("two simultaneous uses of a code: exactly one is the first", Effect.gen(function*() {
      const store = yield* withApplicationAndUser
      yield* store.insertGrant(aGrant())
      const uses = yield* Effect.all([store.useGrant("code-hash-1", at(10)), store.useGrant("code-hash-1", at(10))], {
        concurrency: "unbounded"
      })
      expect(uses.filter((use) => Option.getOrThrow(use).firstUse)).toHaveLength(1)
    }))

    test("stores tokens and finds them by hash and id", Effect.gen(function*() {
      const store = yield* withApplicationAndUser
      yield* store.insertAccessToken(anAccessToken())
      yield* store.insertRefreshToken(aRefreshToken())
      expect(Option.getOrThrow(yield* store.accessTokenByHash("access-hash-1"))).toEqual(anAccessToken())
      expect(Option.getOrThrow(yield* store.accessTokenById("access-1"))).toEqual(anAccessToken())
      expect(Option.getOrThrow(yield* store.refreshTokenByHash("refresh-hash-1"))).toEqual(aRefreshToken())
      expect(yield* store.accessTokenByHash("nope")).toEqual(Option.none())
      expect(yield* store.applicationsUsedBy(aUser().uid)).toEqual(["app-1"])
      yield* store.insertAccessToken(anAccessToken({ id: "api-1", tokenHash: "api-hash-1", kind: "api", createdAt: at(5) }))
      expect((yield* store.apiTokensOf(aUser().uid)).map((token) => token.id)).toEqual(["api-1"])
    }))

    test("exchanges a refresh token once, storing successors that inherit from it", Effect.gen(function*() {
      const store = yield* withRefreshToken(["signin", "editor"])
      const first = Option.getOrThrow(yield* store.exchangeRefreshToken(exchange(1, at(60))))
      expect(first).toEqual({ holder: { refreshToken: refreshToken(), user: aUser(), permissions: ["editor", "signin"] }, exchanged: true })
      expect(Option.getOrThrow(yield* store.refreshTokenByHash("refresh-hash-1")).usedAt).toEqual(at(60))
      expect(Option.getOrThrow(yield* store.accessTokenByHash("access-next-1"))).toEqual(anAccessToken({
        id: "access-next-1",
        tokenHash: "access-next-1",
        scopes: ["openid", "email"],
        createdAt: at(60),
        expiresAt: at(3660)
      }))
      expect(Option.getOrThrow(yield* store.refreshTokenByHash("refresh-next-1"))).toEqual(refreshToken({
        id: "refresh-next-1",
        tokenHash: "refresh-next-1",
        createdAt: at(60)
      }))
      // a replay finds it used and stores nothing
      const replay = Option.getOrThrow(yield* store.exchangeRefreshToken(exchange(2, at(90))))
      expect(replay).toEqual({
        holder: { refreshToken: refreshToken({ usedAt: at(60) }), user: aUser(), permissions: ["editor", "signin"] },
        exchanged: false
      })
      expect(yield* store.accessTokenByHash("access-next-2")).toEqual(Option.none())
      expect(yield* store.refreshTokenByHash("refresh-next-2")).toEqual(Option.none())
      // the successor is exchanged in turn
      const next = yield* store.exchangeRefreshToken({ ...exchange(3, at(120)), tokenHash: "refresh-next-1" })
      expect(Option.getOrThrow(next).exchanged).toBe(true)
      expect(yield* store.exchangeRefreshToken({ ...exchange(4, at(120)), tokenHash: "nope" })).toEqual(Option.none())
    }))

    const refusals: ReadonlyArray<{
      readonly title: string
      readonly permissions: ReadonlyArray<string>
      readonly suspended?: boolean
      readonly application?: Application
      readonly token?: Partial<RefreshToken>
    }> = [
      { title: "its user is suspended", permissions: ["signin"], suspended: true },
      { title: "its user has no permission there", permissions: [] },
      { title: "its user has permissions there but not signin", permissions: ["editor"] },
      { title: "the application is retired", permissions: ["signin"], application: anApplication({ retired: true }) },
      {
        title: "another application presents it",
        permissions: ["signin"],
        application: anApplication({ id: "app-2", name: "Alerts", clientIdHash: "client-id-hash-2" })
      },
      { title: "it is revoked", permissions: ["signin"], token: { revokedAt: at(1) } }
    ]
    for (const refusal of refusals) {
      test(`does not exchange a refresh token when ${refusal.title}, and leaves it as it was`, Effect.gen(function*() {
        const store = yield* withRefreshToken(refusal.permissions, refusal.token)
        if (refusal.suspended === true) yield* store.setSuspension(aUser().uid, { at: at(1), reason: "Left" })
        const application = refusal.application ?? anApplication()
        if (application.id !== "app-1") yield* store.insertApplication(application)
        const before = Option.getOrThrow(yield* store.refreshTokenByHash("refresh-hash-1"))
        const found = Option.getOrThrow(yield* store.exchangeRefreshToken({ ...exchange(1, at(60)), application }))
        expect(found.exchanged).toBe(false)
        const { permissions, refreshToken: token, user } = found.holder
        expect(token).toEqual(before)
        // the server's rule refuses what the store refused
        expect(
          token.applicationId !== application.id || token.revokedAt !== null ||
            accessProblem(user, application, permissions) !== undefined
        ).toBe(true)
        expect(yield* store.refreshTokenByHash("refresh-hash-1")).toEqual(Option.some(before))
        expect(yield* store.accessTokenByHash("access-next-1")).toEqual(Option.none())
        expect(yield* store.refreshTokenByHash("refresh-next-1")).toEqual(Option.none())
        if (refusal.token === undefined && refusal.application === undefined) {
          // allowed back, the same token is exchanged
          yield* store.setSuspension(aUser().uid, null)
          yield* store.setPermissions(aUser().uid, "app-1", ["signin"])
          expect(Option.getOrThrow(yield* store.exchangeRefreshToken(exchange(2, at(90)))).exchanged).toBe(true)
        }
      }))
    }

    test("sees each change to a refresh token's user and permissions at once", Effect.gen(function*() {
      const store = yield* withRefreshToken(["signin", "editor"])
      yield* store.insertApplication(anApplication({ id: "app-2", name: "Alerts", clientIdHash: "client-id-hash-2" }))
      yield* store.setPermissions(aUser().uid, "app-2", ["signin", "other"])
      const refusedWith = (application: Application) =>
        Effect.map(store.exchangeRefreshToken({ ...exchange(1, at(60)), application }), Option.getOrThrow)
      const other = anApplication({ id: "app-2", name: "Alerts", clientIdHash: "client-id-hash-2" })
      // the permissions are those on the token's application, whichever application asks
      expect((yield* refusedWith(other)).holder.permissions).toEqual(["editor", "signin"])
      yield* store.setSuspension(aUser().uid, { at: at(1), reason: "Left" })
      expect((yield* refusedWith(other)).holder.user.suspendedAt).toEqual(at(1))
      yield* store.setPermissions(aUser().uid, "app-1", [])
      expect((yield* refusedWith(other)).holder.permissions).toEqual([])
      yield* store.revokeTokens({ chainId: "chain-1" }, at(2))
      expect((yield* refusedWith(other)).holder.refreshToken.revokedAt).toEqual(at(2))
    }))

    test("many simultaneous exchanges: each answers for its own token, replays and refusals included", Effect.gen(function*() {
      const store = yield* withRefreshToken(["signin"])
      const tokens = Array.from({ length: 40 }, (_, n) => `refresh-many-${n}`)
      yield* Effect.forEach(tokens, (tokenHash, n) =>
        store.insertRefreshToken(refreshToken({ id: `many-${n}`, tokenHash, chainId: `chain-many-${n}`, revokedAt: n % 10 === 9 ? at(1) : null })))
      const exchangeOf = (tokenHash: string, n: number) => ({
        ...exchange(n, at(60)),
        tokenHash,
        accessToken: { id: `access-of-${n}`, tokenHash: `access-of-${n}`, expiresAt: at(3660) },
        refreshToken: { id: `refresh-of-${n}`, tokenHash: `refresh-of-${n}` }
      })
      // each token twice, and one unknown
      const requests = [...tokens, ...tokens, "unknown"].map(exchangeOf)
      const outcomes = yield* Effect.all(requests.map((request) => store.exchangeRefreshToken(request)), {
        concurrency: "unbounded"
      })
      expect(Option.isNone(outcomes[80]!)).toBe(true)
      for (const [n, tokenHash] of tokens.entries()) {
        const pair = [outcomes[n]!, outcomes[n + 40]!].map(Option.getOrThrow)
        expect(pair.map((outcome) => outcome.holder.refreshToken.tokenHash)).toEqual([tokenHash, tokenHash])
        expect(pair.map((outcome) => outcome.holder.refreshToken.chainId)).toEqual([`chain-many-${n}`, `chain-many-${n}`])
        const winners = [n, n + 40].filter((_, index) => pair[index]!.exchanged)
        expect(winners).toHaveLength(n % 10 === 9 ? 0 : 1)
        for (const index of [n, n + 40]) {
          const issued = yield* store.refreshTokenByHash(`refresh-of-${index}`)
          expect(Option.map(issued, (token) => token.chainId)).toEqual(
            winners.includes(index) ? Option.some(`chain-many-${n}`) : Option.none()
          )
          const access = yield* store.accessTokenByHash(`access-of-${index}`)
          expect(Option.isSome(access)).toBe(winners.includes(index))
        }
      }
    }))

    test("two simultaneous exchanges of a refresh token: exactly one exchanges it", Effect.gen(function*() {
      const store = yield* withRefreshToken(["signin"])
      const outcomes = yield* Effect.all([
        store.exchangeRefreshToken(exchange(1, at(60))),
        store.exchangeRefreshToken(exchange(2, at(60)))
      ], { concurrency: "unbounded" })
      expect(outcomes.filter((outcome) => Option.getOrThrow(outcome).exchanged)).toHaveLength(1)
      const stored = yield* Effect.all([store.refreshTokenByHash("refresh-next-1"), store.refreshTokenByHash("refresh-next-2")])
      expect(stored.filter(Option.isSome)).toHaveLength(1)
    }))

    test("finds a token's holder in one read, and sees each change to it at once", Effect.gen(function*() {
      const store = yield* withApplicationAndUser
      yield* store.setPermissions(aUser().uid, "app-1", ["signin", "editor"])
      yield* store.insertAccessToken(anAccessToken())
      const holder = Effect.map(store.tokenHolder("access-hash-1"), Option.getOrThrow)
      expect(yield* holder).toEqual({
        accessToken: anAccessToken(),
        application: anApplication(),
        user: aUser(),
        permissions: ["editor", "signin"]
      })
      expect(yield* store.tokenHolder("nope")).toEqual(Option.none())
      expect((yield* holder).permissions).toEqual(["editor", "signin"])

      yield* store.setPermissions(aUser().uid, "app-1", [])
      expect((yield* holder).permissions).toEqual([])
      yield* store.atomically(store.setPermissions(aUser().uid, "app-1", ["signin"]))
      expect((yield* holder).permissions).toEqual(["signin"])
      yield* store.updateUser(aUser().uid, { name: "Ada King" })
      expect((yield* holder).user.name).toBe("Ada King")
      yield* store.setSuspension(aUser().uid, { at: at(1), reason: "Left" })
      expect((yield* holder).user.suspendedAt).toEqual(at(1))
      yield* store.updateApplication(anApplication({ retired: true }))
      expect((yield* holder).application.retired).toBe(true)
      yield* store.revokeTokens({ accessTokenId: "access-1" }, at(2))
      expect((yield* holder).accessToken.revokedAt).toEqual(at(2))
    }))

    test("finds an application by client id hash as it is now after every change", Effect.gen(function*() {
      const store = yield* SsoStore
      yield* store.insertApplication(anApplication())
      const byClientId = (hash: string) => Effect.map(store.applicationByClientIdHash(hash), Option.map((found) => found.retired))
      expect(yield* byClientId("client-id-hash-1")).toEqual(Option.some(false))
      yield* store.updateApplication(anApplication({ retired: true }))
      expect(yield* byClientId("client-id-hash-1")).toEqual(Option.some(true))
      // a new client id: the old one finds nothing at once
      yield* store.updateApplication(anApplication({ clientIdHash: "client-id-hash-9" }))
      expect(yield* byClientId("client-id-hash-1")).toEqual(Option.none())
      expect(yield* byClientId("client-id-hash-9")).toEqual(Option.some(false))
      // rolled back: as it was
      const failed = yield* store.atomically(
        Effect.zipRight(store.updateApplication(anApplication({ clientIdHash: "client-id-hash-7" })), Effect.fail("stop" as const))
      ).pipe(Effect.flip)
      expect(failed).toBe("stop")
      if (name !== "memory") expect(yield* byClientId("client-id-hash-9")).toEqual(Option.some(false))
    }))

    test("answers a holder from memory only as tokenHolder would answer it now", Effect.gen(function*() {
      const store = yield* withApplicationAndUser
      yield* store.setPermissions(aUser().uid, "app-1", ["signin"])
      yield* store.insertAccessToken(anAccessToken())
      const inMemory = Effect.map(Clock.currentTimeMillis, (nowMillis) => store.tokenHolderInMemory("access-hash-1", nowMillis))
      let read = yield* store.tokenHolder("access-hash-1")
      // the database's notices of the changes above come on their own time and may make it forget that first read
      for (let tries = 0; Option.isNone(yield* inMemory) && tries < 50; tries++) {
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
        read = yield* store.tokenHolder("access-hash-1")
      }
      expect(yield* inMemory).toEqual(read)
      expect(store.tokenHolderInMemory("nope", 0)).toEqual(Option.none())

      const changes = [
        store.setPermissions(aUser().uid, "app-1", ["signin", "editor"]),
        store.updateUser(aUser().uid, { name: "Ada King" }),
        store.setSuspension(aUser().uid, { at: at(1), reason: "Left" }),
        store.updateApplication(anApplication({ retired: true })),
        store.revokeTokens({ accessTokenId: "access-1" }, at(2))
      ]
      for (const change of changes) {
        yield* change
        const remembered = yield* inMemory
        // forgotten, or already the new answer: never the one from before the change
        if (Option.isSome(remembered)) expect(remembered).toEqual(yield* store.tokenHolder("access-hash-1"))
        const current = yield* store.tokenHolder("access-hash-1")
        expect(current).not.toEqual(read)
        const kept = yield* inMemory
        if (Option.isSome(kept)) expect(kept).toEqual(current)
      }
    }))

    test("a change rolled back leaves the token's holder as it was", Effect.gen(function*() {
      const store = yield* withApplicationAndUser
      yield* store.setPermissions(aUser().uid, "app-1", ["signin"])
      yield* store.insertAccessToken(anAccessToken())
      expect(Option.getOrThrow(yield* store.tokenHolder("access-hash-1")).permissions).toEqual(["signin"])
      const failed = yield* store.atomically(
        Effect.zipRight(store.setPermissions(aUser().uid, "app-1", []), Effect.fail("stop" as const))
      ).pipe(Effect.flip)
      expect(failed).toBe("stop")
      // the memory store does not roll back
      if (name !== "memory") expect(Option.getOrThrow(yield* store.tokenHolder("access-hash-1")).permissions).toEqual(["signin"])
    }))

    test("revokes tokens by code, chain, user or id, each once", Effect.gen(function*() {
      const store = yield* withApplicationAndUser
      yield* store.insertAccessToken(anAccessToken())
      yield* store.insertRefreshToken(aRefreshToken())
      yield* store.insertAccessToken(anAccessToken({ id: "access-2", tokenHash: "h2", grantCodeHash: null, chainId: "chain-2" }))
      yield* store.insertAccessToken(anAccessToken({ id: "access-3", tokenHash: "h3", grantCodeHash: null, chainId: null }))
      expect(yield* store.revokeTokens({ grantCodeHash: "code-hash-1" }, at(1))).toBe(2)
      expect(yield* store.revokeTokens({ grantCodeHash: "code-hash-1" }, at(2))).toBe(0)
      expect(Option.getOrThrow(yield* store.accessTokenByHash("access-hash-1")).revokedAt).toEqual(at(1))
      expect(yield* store.revokeTokens({ chainId: "chain-2" }, at(3))).toBe(1)
      expect(yield* store.revokeTokens({ accessTokenId: "access-3" }, at(4))).toBe(1)
      yield* store.insertAccessToken(anAccessToken({ id: "access-4", tokenHash: "h4" }))
      expect(yield* store.revokeTokens({ userUid: aUser().uid }, at(5))).toBe(1)
    }))

    test("revokes a user's tokens from signing in, leaving their API tokens", Effect.gen(function*() {
      const store = yield* withApplicationAndUser
      yield* store.insertAccessToken(anAccessToken())
      yield* store.insertRefreshToken(aRefreshToken())
      yield* store.insertAccessToken(anAccessToken({ id: "api-1", tokenHash: "api-hash-1", kind: "api", grantCodeHash: null, chainId: null }))
      expect(yield* store.revokeTokens({ chainsOf: aUser().uid }, at(1))).toBe(2)
      expect(Option.getOrThrow(yield* store.refreshTokenByHash("refresh-hash-1")).revokedAt).toEqual(at(1))
      expect(Option.getOrThrow(yield* store.accessTokenByHash("api-hash-1")).revokedAt).toBeNull()
    }))

    test("runs exclusive work one caller at a time, and rolls back what failed", Effect.gen(function*() {
      const store = yield* SsoStore
      const order: Array<string> = []
      const work = (name: string) =>
        store.exclusively(Effect.gen(function*() {
          order.push(`${name} start`)
          yield* Effect.sleep("20 millis")
          order.push(`${name} end`)
        }))
      yield* Effect.all([work("a"), work("b")], { concurrency: "unbounded" }).pipe(Effect.withClock(Clock.make()))
      // either may go first on SQL (both ask for the lock at once), but never both at once
      expect([["a start", "a end", "b start", "b end"], ["b start", "b end", "a start", "a end"]]).toContainEqual(order)
      const failed = yield* Effect.flip(store.exclusively(Effect.zipRight(store.insertUser(aUser()), Effect.fail("stop"))))
      expect(failed).toBe("stop")
      if (name !== "memory") expect(yield* store.listUsers).toEqual([])
    }))

    test("keeps one push credential per application, replaced when renewed", Effect.gen(function*() {
      const store = yield* withApplicationAndUser
      expect(yield* store.pushCredential("app-1")).toEqual(Option.none())
      const first = { applicationId: "app-1", tokenId: "t1", token: "secret-1", expiresAt: at(1000) }
      yield* store.savePushCredential(first)
      yield* store.savePushCredential({ ...first, tokenId: "t2", token: "secret-2" })
      expect(Option.getOrThrow(yield* store.pushCredential("app-1"))).toEqual({ ...first, tokenId: "t2", token: "secret-2" })
      expect(yield* store.allPushCredentials).toEqual([{ ...first, tokenId: "t2", token: "secret-2" }])
    }))

    test("atomically keeps a change whole or, on SQL, not at all", Effect.gen(function*() {
      const store = yield* SsoStore
      yield* store.atomically(Effect.zipRight(store.insertUser(aUser()), store.setSuspension(aUser().uid, { at: at(1), reason: "x" })))
      expect(Option.getOrThrow(yield* store.userByUid(aUser().uid)).suspensionReason).toBe("x")
      const failed = yield* Effect.flip(store.atomically(Effect.zipRight(store.setSuspension(aUser().uid, null), Effect.fail("stop"))))
      expect(failed).toBe("stop")
      if (name !== "memory") expect(Option.getOrThrow(yield* store.userByUid(aUser().uid)).suspensionReason).toBe("x")
    }))

    test("keeps signing keys newest first and retires all but one", Effect.gen(function*() {
      const store = yield* SsoStore
      const key = (kid: string, seconds: number) => ({
        kid,
        privateJwk: { kty: "RSA", d: `private-${kid}` },
        publicJwk: { kty: "RSA", n: `public-${kid}` },
        createdAt: at(seconds),
        retiredAt: null
      })
      yield* store.insertSigningKey(key("k1", 0))
      yield* store.insertSigningKey(key("k2", 10))
      yield* store.retireSigningKeys("k2", at(20))
      expect(yield* store.signingKeys).toEqual([key("k2", 10), { ...key("k1", 0), retiredAt: at(20) }])
      yield* store.replacePrivateJwk("k1", { sealed: "sealed-k1" })
      expect((yield* store.signingKeys).map((each) => each.privateJwk)).toEqual([key("k2", 10).privateJwk, { sealed: "sealed-k1" }])
    }))

    test("counts failed attempts per key in a window and forgets old ones", Effect.gen(function*() {
      const store = yield* SsoStore
      yield* store.recordFailedAttempt(["client:a", "ip:1"], at(0), at(-600))
      yield* store.recordFailedAttempt(["client:a", "ip:1"], at(100), at(-500))
      yield* store.recordFailedAttempt(["ip:1"], at(700), at(100))
      expect(yield* store.failedAttempts(["client:a"], at(-1))).toEqual([{ count: 2, oldest: at(0) }])
      expect(yield* store.failedAttempts(["client:a"], at(0))).toEqual([{ count: 1, oldest: at(100) }])
      expect(yield* store.failedAttempts(["client:a"], at(50))).toEqual([{ count: 1, oldest: at(100) }])
      // the first record of ip:1 was older than the third call's horizon
      expect(yield* store.failedAttempts(["ip:1"], at(-1000))).toEqual([{ count: 2, oldest: at(100) }])
      expect(yield* store.failedAttempts(["client:b"], at(0))).toEqual([{ count: 0, oldest: null }])
      // several keys in one read, answered in the order asked, a key asked twice answered twice
      expect(yield* store.failedAttempts(["ip:1", "client:b", "client:a", "ip:1"], at(-1))).toEqual([
        { count: 2, oldest: at(100) },
        { count: 0, oldest: null },
        { count: 2, oldest: at(0) },
        { count: 2, oldest: at(100) }
      ])
      expect(yield* store.failedAttempts([], at(0))).toEqual([])
    }))

    test("a session lives while it is seen within the idle time", Effect.gen(function*() {
      const store = yield* withApplicationAndUser
      const session = {
        idHash: "s1",
        userUid: aUser().uid,
        csrfToken: "csrf",
        authTime: at(0),
        lastSeenAt: at(0),
        awaitingSecondStep: false
      }
      yield* store.insertSession(session)
      expect(Option.getOrThrow(yield* store.touchSession("s1", at(-1800), at(100))).lastSeenAt).toEqual(at(100))
      expect(yield* store.touchSession("s1", at(100), at(2000))).toEqual(Option.none())
      expect(Option.isSome(yield* store.touchSession("s1", at(99), at(200)))).toBe(true)
      yield* store.deleteSession("s1")
      expect(yield* store.touchSession("s1", at(0), at(300))).toEqual(Option.none())
      yield* store.insertSession({ ...session, idHash: "s2", awaitingSecondStep: true })
      yield* store.insertSession({ ...session, idHash: "s3" })
      expect(Option.getOrThrow(yield* store.touchSession("s2", at(-1), at(1))).awaitingSecondStep).toBe(true)
      yield* store.deleteSessionsOf(aUser().uid, { except: "s3" })
      expect(yield* store.touchSession("s2", at(-1), at(1))).toEqual(Option.none())
      expect(Option.isSome(yield* store.touchSession("s3", at(-1), at(1)))).toBe(true)
      yield* store.deleteSessionsOf(aUser().uid)
      expect(yield* store.touchSession("s3", at(-1), at(1))).toEqual(Option.none())
    }))

    test("two-step verification: a set-up keeps its secret until confirmed, then codes and recovery codes work once", Effect.gen(function*() {
      const store = yield* withApplicationAndUser
      const uid = aUser().uid
      expect(yield* store.twoStepOf(uid)).toEqual(Option.none())
      expect(yield* store.useTotpStep(uid, 5)).toBe(false)
      const begun = yield* store.beginTwoStep(uid, "FIRSTSECRETAAAAA")
      expect(begun).toEqual({ userUid: uid, secret: "FIRSTSECRETAAAAA", confirmedAt: null, lastStep: null, recoveryCodesLeft: 0 })
      expect((yield* store.beginTwoStep(uid, "SECONDSECRETBBBB")).secret).toBe("FIRSTSECRETAAAAA")
      expect(yield* store.useTotpStep(uid, 5)).toBe(false)
      const step = 57_000_000
      expect(yield* store.usersWithTwoStep).toEqual([])
      expect(yield* store.confirmTwoStep(uid, { at: at(10), lastStep: step, recoveryCodeHashes: ["h1", "h2"] })).toBe(true)
      expect(yield* store.usersWithTwoStep).toEqual([uid])
      expect(yield* store.confirmTwoStep(uid, { at: at(11), lastStep: null, recoveryCodeHashes: [] })).toBe(false)
      expect(Option.getOrThrow(yield* store.twoStepOf(uid))).toEqual({
        userUid: uid,
        secret: "FIRSTSECRETAAAAA",
        confirmedAt: at(10),
        lastStep: step,
        recoveryCodesLeft: 2
      })
      expect((yield* store.beginTwoStep(uid, "THIRDSECRETCCCCC")).confirmedAt).toEqual(at(10))
      // a step is taken once, and never one before the last
      expect(yield* store.useTotpStep(uid, step)).toBe(false)
      expect(yield* store.useTotpStep(uid, step + 1)).toBe(true)
      expect(yield* store.useTotpStep(uid, step + 1)).toBe(false)
      expect(yield* store.useTotpStep(uid, step - 1)).toBe(false)
      expect(yield* store.useRecoveryCode(uid, "h1", at(20))).toBe(true)
      expect(yield* store.useRecoveryCode(uid, "h1", at(21))).toBe(false)
      expect(yield* store.useRecoveryCode(uid, "h3", at(21))).toBe(false)
      expect(yield* store.useRecoveryCode("another-user", "h2", at(21))).toBe(false)
      expect(Option.getOrThrow(yield* store.twoStepOf(uid)).recoveryCodesLeft).toBe(1)
      expect(yield* store.twoStepSecrets).toEqual([{ userUid: uid, secret: "FIRSTSECRETAAAAA" }])
      yield* store.replaceTwoStepSecret(uid, "RESEALEDSECRETDD")
      expect(Option.getOrThrow(yield* store.twoStepOf(uid)).secret).toBe("RESEALEDSECRETDD")
      expect(yield* store.removeTwoStep(uid)).toBe(true)
      expect(yield* store.removeTwoStep(uid)).toBe(false)
      expect(yield* store.twoStepOf(uid)).toEqual(Option.none())
      expect(yield* store.useRecoveryCode(uid, "h2", at(22))).toBe(false)
      // a new set-up after a reset starts without the old recovery codes
      yield* store.beginTwoStep(uid, "FOURTHSECRETEEEE")
      expect(yield* store.confirmTwoStep(uid, { at: at(30), lastStep: null, recoveryCodeHashes: [] })).toBe(true)
      expect(Option.getOrThrow(yield* store.twoStepOf(uid)).recoveryCodesLeft).toBe(0)
      expect(yield* store.useTotpStep(uid, 1)).toBe(true)
    }))

    test("emailed links: found by their token's hash, used once, ended together, and kept 30 days past expiry", Effect.gen(function*() {
      const store = yield* withApplicationAndUser
      const uid = aUser().uid
      const link = (id: string, overrides: Partial<EmailLink> = {}): EmailLink => ({
        id,
        userUid: uid,
        purpose: "password_reset",
        tokenHash: `hash-${id}`,
        createdAt: at(0),
        expiresAt: at(7200),
        usedAt: null,
        ...overrides
      })
      yield* store.insertEmailLink(link("l1"))
      yield* store.insertEmailLink(link("l2", { purpose: "invitation", expiresAt: at(7 * 86_400) }))
      expect(Option.getOrThrow(yield* store.emailLinkByHash("hash-l1"))).toEqual(link("l1"))
      expect(yield* store.emailLinkByHash("hash-l3")).toEqual(Option.none())
      expect(yield* store.emailLinkByHash("hash\u0000l1")).toEqual(Option.none())
      expect(yield* store.useEmailLink("l1", at(10))).toBe(true)
      expect(yield* store.useEmailLink("l1", at(11))).toBe(false)
      expect(yield* store.useEmailLink("nothing", at(11))).toBe(false)
      expect(Option.getOrThrow(yield* store.emailLinkByHash("hash-l1")).usedAt).toEqual(at(10))
      yield* store.endEmailLinksOf(uid, at(20))
      expect(Option.getOrThrow(yield* store.emailLinkByHash("hash-l2")).usedAt).toEqual(at(20))
      expect(yield* store.useEmailLink("l2", at(21))).toBe(false)
      // a link that expired within 30 days still explains itself; one that expired before goes with the next insert
      const day = 86_400
      yield* store.insertEmailLink(link("l3", { createdAt: at(35 * day), expiresAt: at(35 * day + 7200) }))
      expect(Option.isSome(yield* store.emailLinkByHash("hash-l2"))).toBe(true)
      expect(yield* store.emailLinkByHash("hash-l1")).toEqual(Option.none())
      expect(Option.isSome(yield* store.emailLinkByHash("hash-l3"))).toBe(true)
    }))

    test("lists events newest first, for one user or all", Effect.gen(function*() {
      const store = yield* SsoStore
      yield* store.appendEvent({ at: at(1), kind: "signed_in", userUid: "u1", applicationId: null, detail: {} })
      yield* store.appendEvent({ at: at(2), kind: "push", userUid: "u2", applicationId: "a", detail: { status: 200 } })
      yield* store.appendEvent({ at: at(3), kind: "signed_out", userUid: "u1", applicationId: null, detail: {} })
      expect((yield* store.events({ userUid: "u1", limit: 10 })).map((event) => event.kind)).toEqual(["signed_out", "signed_in"])
      const all = yield* store.events({ limit: 2 })
      expect(all.map((event) => event.kind)).toEqual(["signed_out", "push"])
      expect(all[1]).toEqual({ at: at(2), kind: "push", userUid: "u2", applicationId: "a", detail: { status: 200 } })
      const kinds = (filter: Omit<Parameters<typeof store.events>[0], "limit">) =>
        Effect.map(store.events({ ...filter, limit: 10 }), (found) => found.map((event) => event.kind))
      expect(yield* kinds({ kind: "push" })).toEqual(["push"])
      expect(yield* kinds({ since: at(2) })).toEqual(["signed_out", "push"])
      expect(yield* kinds({ until: at(2) })).toEqual(["signed_in"])
      expect(yield* kinds({ userUid: "u1", since: at(1), until: at(3) })).toEqual(["signed_in"])
      expect(yield* kinds({ kind: "push\u0000" })).toEqual([])
    }))
  })
