import type { Context } from "effect"
import { Effect, Layer, Option } from "effect"
import type {
  AccessToken,
  Application,
  EmailLink,
  Grant,
  RefreshToken,
  SignInSession,
  SigningKey,
  SsoEvent,
  TwoStep,
  User
} from "../domain/records"
import { accessProblem } from "../domain/access"
import { AlreadyTaken, SsoStore } from "./SsoStore"
import type { PushCredential, TokenHolder, TokenSelection, UserChanges } from "./SsoStore"

type Store = Context.Tag.Service<SsoStore>

/** How long links are kept after they expire, so that one followed late still explains itself. */
const EXPIRED_LINKS_KEPT_MILLIS = 30 * 24 * 3600 * 1000

const emailKey = (email: string) => email.toLowerCase()

/** Each operation runs synchronously, so it is atomic as the SQL adapter's statements are. */
const makeMemoryStore = (setupLock: Effect.Semaphore): Store => {
  const applications = new Map<string, Application>()
  const users = new Map<string, User>()
  const permissions = new Map<string, Map<string, ReadonlyArray<string>>>()
  const grants = new Map<string, Grant>()
  const accessTokens = new Map<string, AccessToken>()
  const refreshTokens = new Map<string, RefreshToken>()
  const attempts = new Map<string, Array<Date>>()
  const sessions = new Map<string, SignInSession>()
  const events: Array<SsoEvent> = []
  const pushCredentials = new Map<string, PushCredential>()
  const signingKeys: Array<SigningKey> = []
  const twoSteps = new Map<string, Omit<TwoStep, "recoveryCodesLeft">>()
  const emailLinks = new Map<string, EmailLink>()
  /** Per user, each recovery code's hash and when it was used. */
  const recoveryCodes = new Map<string, Map<string, Date | null>>()

  const find = <A>(values: Iterable<A>, test: (value: A) => boolean) =>
    Effect.sync(() => Option.fromNullable([...values].find(test)))

  const nameTaken = (application: Application) =>
    [...applications.values()].some((other) => other.id !== application.id && other.name === application.name)
  const clientIdTaken = (application: Application) =>
    [...applications.values()].some((other) =>
      other.id !== application.id && other.clientIdHash === application.clientIdHash
    )
  const emailTaken = (email: string, uid: string) =>
    [...users.values()].some((other) => other.uid !== uid && emailKey(other.email) === emailKey(email))

  const saveApplication = (application: Application) =>
    Effect.suspend(() => {
      if (nameTaken(application)) return new AlreadyTaken({ field: "name" })
      if (clientIdTaken(application)) return new AlreadyTaken({ field: "client_id" })
      applications.set(application.id, application)
      return Effect.void
    })

  const modifyUser = (uid: string, change: (user: User) => User) =>
    Effect.sync(() => {
      const user = users.get(uid)
      if (user === undefined) return Option.none()
      const changed = change(user)
      users.set(uid, changed)
      return Option.some(changed)
    })

  const withCodesLeft = (twoStep: Omit<TwoStep, "recoveryCodesLeft">): TwoStep => ({
    ...twoStep,
    recoveryCodesLeft: [...(recoveryCodes.get(twoStep.userUid)?.values() ?? [])].filter((usedAt) => usedAt === null).length
  })

  const use = <A extends { readonly usedAt: Date | null }>(records: Map<string, A>, hash: string, now: Date) =>
    Effect.sync(() => {
      const record = records.get(hash)
      if (record === undefined) return Option.none()
      if (record.usedAt !== null) return Option.some({ record, firstUse: false })
      const used = { ...record, usedAt: now }
      records.set(hash, used)
      return Option.some({ record: used, firstUse: true })
    })

  const selects = (selection: TokenSelection) => (token: AccessToken | RefreshToken) =>
    "grantCodeHash" in selection
      ? token.grantCodeHash === selection.grantCodeHash
      : "chainId" in selection
      ? token.chainId === selection.chainId
      : "userUid" in selection
      ? token.userUid === selection.userUid
      : "chainsOf" in selection
      ? token.userUid === selection.chainsOf && token.chainId !== null
      : token.id === selection.accessTokenId

  const revokeIn = <A extends AccessToken | RefreshToken>(tokens: Map<string, A>, test: (token: A) => boolean, now: Date) => {
    let revoked = 0
    for (const [hash, token] of tokens) {
      if (token.revokedAt === null && test(token)) {
        tokens.set(hash, { ...token, revokedAt: now })
        revoked++
      }
    }
    return revoked
  }

  const holderOf = (hash: string): Option.Option<TokenHolder> => {
    const accessToken = accessTokens.get(hash)
    const application = accessToken && applications.get(accessToken.applicationId)
    const user = accessToken && users.get(accessToken.userUid)
    if (accessToken === undefined || application === undefined || user === undefined) return Option.none()
    const held = permissions.get(user.uid)?.get(application.id) ?? []
    return Option.some({ accessToken, application, user, permissions: held })
  }

  return {
    exclusively: setupLock.withPermits(1),
    atomically: (effect) => effect,
    pushCredential: (applicationId) => Effect.sync(() => Option.fromNullable(pushCredentials.get(applicationId))),
    savePushCredential: (credential) => Effect.sync(() => void pushCredentials.set(credential.applicationId, credential)),
    allPushCredentials: Effect.sync(() => [...pushCredentials.values()]),
    insertApplication: saveApplication,
    updateApplication: saveApplication,
    applicationById: (id) => Effect.sync(() => Option.fromNullable(applications.get(id))),
    applicationByName: (name) => find(applications.values(), (application) => application.name === name),
    applicationByClientIdHash: (hash) => find(applications.values(), (application) => application.clientIdHash === hash),
    listApplications: Effect.sync(() => [...applications.values()].sort((a, b) => a.name.localeCompare(b.name))),

    insertUser: (user) =>
      Effect.suspend(() => {
        if (emailTaken(user.email, user.uid)) return new AlreadyTaken({ field: "email" })
        users.set(user.uid, user)
        return Effect.void
      }),
    userByUid: (uid) => Effect.sync(() => Option.fromNullable(users.get(uid))),
    userByEmail: (email) => find(users.values(), (user) => emailKey(user.email) === emailKey(email)),
    listUsers: Effect.sync(() => [...users.values()].sort((a, b) => a.email.localeCompare(b.email))),
    updateUser: (uid, changes: UserChanges) =>
      Effect.suspend(() =>
        changes.email !== undefined && emailTaken(changes.email, uid)
          ? new AlreadyTaken({ field: "email" })
          : modifyUser(uid, (user) => ({ ...user, ...changes }))
      ),
    setPasswordHash: (uid, passwordHash) => Effect.asVoid(modifyUser(uid, (user) => ({ ...user, passwordHash }))),
    setSuspension: (uid, suspension) =>
      modifyUser(uid, (user) => ({
        ...user,
        suspendedAt: suspension?.at ?? null,
        suspensionReason: suspension?.reason ?? null
      })),
    recordFailedSignIn: (uid, lock) =>
      modifyUser(uid, (user) => {
        const lockEnded = user.lockedUntil !== null && user.lockedUntil.getTime() <= lock.at.getTime()
        const failedSignIns = (lockEnded ? 0 : user.failedSignIns) + 1
        const lockedUntil = failedSignIns >= lock.lockAfter ? lock.lockUntil : lockEnded ? null : user.lockedUntil
        return { ...user, failedSignIns, lockedUntil }
      }),
    clearFailedSignIns: (uid) => modifyUser(uid, (user) => ({ ...user, failedSignIns: 0, lockedUntil: null })),

    twoStepOf: (uid) => Effect.sync(() => Option.map(Option.fromNullable(twoSteps.get(uid)), withCodesLeft)),
    beginTwoStep: (uid, secret) =>
      Effect.sync(() => {
        if (!twoSteps.has(uid)) twoSteps.set(uid, { userUid: uid, secret, confirmedAt: null, lastStep: null })
        return withCodesLeft(twoSteps.get(uid)!)
      }),
    confirmTwoStep: (uid, { at, lastStep, recoveryCodeHashes }) =>
      Effect.sync(() => {
        const pending = twoSteps.get(uid)
        if (pending === undefined || pending.confirmedAt !== null) return false
        twoSteps.set(uid, { ...pending, confirmedAt: at, lastStep })
        recoveryCodes.set(uid, new Map(recoveryCodeHashes.map((hash) => [hash, null])))
        return true
      }),
    useTotpStep: (uid, step) =>
      Effect.sync(() => {
        const twoStep = twoSteps.get(uid)
        if (twoStep?.confirmedAt == null || (twoStep.lastStep !== null && step <= twoStep.lastStep)) return false
        twoSteps.set(uid, { ...twoStep, lastStep: step })
        return true
      }),
    useRecoveryCode: (uid, codeHash, at) =>
      Effect.sync(() => {
        const codes = recoveryCodes.get(uid)
        if (codes === undefined || codes.get(codeHash) !== null) return false
        codes.set(codeHash, at)
        return true
      }),
    removeTwoStep: (uid) =>
      Effect.sync(() => {
        recoveryCodes.delete(uid)
        return twoSteps.delete(uid)
      }),
    usersWithTwoStep: Effect.sync(() => [...twoSteps.values()].filter((twoStep) => twoStep.confirmedAt !== null).map(({ userUid }) => userUid)),
    twoStepSecrets: Effect.sync(() => [...twoSteps.values()].map(({ secret, userUid }) => ({ userUid, secret }))),
    replaceTwoStepSecret: (uid, secret) =>
      Effect.sync(() => {
        const twoStep = twoSteps.get(uid)
        if (twoStep !== undefined) twoSteps.set(uid, { ...twoStep, secret })
      }),

    insertEmailLink: (link) =>
      Effect.sync(() => {
        const forgetBefore = link.createdAt.getTime() - EXPIRED_LINKS_KEPT_MILLIS
        for (const [id, kept] of emailLinks) if (kept.expiresAt.getTime() < forgetBefore) emailLinks.delete(id)
        emailLinks.set(link.id, link)
      }),
    emailLinkByHash: (tokenHash) => find(emailLinks.values(), (link) => link.tokenHash === tokenHash),
    useEmailLink: (id, at) =>
      Effect.sync(() => {
        const link = emailLinks.get(id)
        if (link === undefined || link.usedAt !== null) return false
        emailLinks.set(id, { ...link, usedAt: at })
        return true
      }),
    endEmailLinksOf: (uid, at) =>
      Effect.sync(() => {
        for (const [id, link] of emailLinks) if (link.userUid === uid && link.usedAt === null) emailLinks.set(id, { ...link, usedAt: at })
      }),

    permissionsOf: (uid) =>
      Effect.sync(() =>
        [...(permissions.get(uid) ?? new Map<string, ReadonlyArray<string>>())].map(([applicationId, names]) => ({
          applicationId,
          permissions: names
        }))
      ),
    setPermissions: (uid, applicationId, names) =>
      Effect.sync(() => {
        const held = permissions.get(uid) ?? new Map<string, ReadonlyArray<string>>()
        if (names.length === 0) held.delete(applicationId)
        else held.set(applicationId, [...new Set(names)].sort())
        permissions.set(uid, held)
      }),

    insertGrant: (grant) => Effect.sync(() => void grants.set(grant.codeHash, grant)),
    useGrant: (codeHash, now) => use(grants, codeHash, now),

    insertAccessToken: (token) => Effect.sync(() => void accessTokens.set(token.tokenHash, token)),
    accessTokenByHash: (hash) => Effect.sync(() => Option.fromNullable(accessTokens.get(hash))),
    tokenHolder: (hash) => Effect.sync(() => holderOf(hash)),
    tokenHolderInMemory: holderOf,
    accessTokenById: (id) => find(accessTokens.values(), (token) => token.id === id),
    apiTokensOf: (uid) =>
      Effect.sync(() =>
        [...accessTokens.values()].filter((token) => token.userUid === uid && token.kind === "api")
          .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())
      ),
    insertRefreshToken: (token) => Effect.sync(() => void refreshTokens.set(token.tokenHash, token)),
    refreshTokenByHash: (hash) => Effect.sync(() => Option.fromNullable(refreshTokens.get(hash))),
    exchangeRefreshToken: ({ accessToken, application, now, refreshToken, tokenHash }) =>
      Effect.sync(() => {
        const token = refreshTokens.get(tokenHash)
        const user = token && users.get(token.userUid)
        if (token === undefined || user === undefined) return Option.none()
        const held = permissions.get(user.uid)?.get(token.applicationId) ?? []
        const holder = { refreshToken: token, user, permissions: held }
        const exchanged = token.applicationId === application.id && token.usedAt === null && token.revokedAt === null &&
          accessProblem(user, application, held) === undefined
        if (exchanged) {
          const inherited = {
            applicationId: token.applicationId,
            userUid: token.userUid,
            scopes: token.scopes,
            grantCodeHash: token.grantCodeHash,
            chainId: token.chainId,
            createdAt: now,
            revokedAt: null
          }
          refreshTokens.set(tokenHash, { ...token, usedAt: now })
          accessTokens.set(accessToken.tokenHash, { ...inherited, ...accessToken, kind: "oauth" })
          refreshTokens.set(refreshToken.tokenHash, { ...inherited, ...refreshToken, authTime: token.authTime, usedAt: null })
        }
        return Option.some({ holder, exchanged })
      }),
    revokeTokens: (selection, now) =>
      Effect.sync(() => revokeIn(accessTokens, selects(selection), now) + revokeIn(refreshTokens, selects(selection), now)),
    applicationsUsedBy: (uid) =>
      Effect.sync(() => [
        ...new Set([...accessTokens.values()].filter((token) => token.userUid === uid).map((token) => token.applicationId))
      ]),

    recordFailedAttempt: (keys, at, forgetBefore) =>
      Effect.sync(() => {
        for (const key of keys) {
          const kept = (attempts.get(key) ?? []).filter((when) => when.getTime() >= forgetBefore.getTime())
          kept.push(at)
          attempts.set(key, kept)
        }
      }),
    failedAttempts: (keys, since) =>
      Effect.sync(() =>
        keys.map((key) => {
          const recent = (attempts.get(key) ?? []).filter((when) => when.getTime() > since.getTime())
          const oldest = recent.reduce<Date | null>((min, when) => (min === null || when < min ? when : min), null)
          return { count: recent.length, oldest }
        })
      ),

    insertSession: (session) => Effect.sync(() => void sessions.set(session.idHash, session)),
    touchSession: (idHash, idleSince, now) =>
      Effect.sync(() => {
        const session = sessions.get(idHash)
        if (session === undefined || session.lastSeenAt.getTime() <= idleSince.getTime()) return Option.none()
        const seen = { ...session, lastSeenAt: now }
        sessions.set(idHash, seen)
        return Option.some(seen)
      }),
    deleteSession: (idHash) => Effect.sync(() => void sessions.delete(idHash)),
    deleteSessionsOf: (uid, options) =>
      Effect.sync(() => {
        for (const [idHash, session] of sessions) {
          if (session.userUid === uid && idHash !== options?.except) sessions.delete(idHash)
        }
      }),

    signingKeys: Effect.sync(() => [...signingKeys].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())),
    insertSigningKey: (key) => Effect.sync(() => void signingKeys.push(key)),
    replacePrivateJwk: (kid, privateJwk) =>
      Effect.sync(() => {
        signingKeys.forEach((key, index) => {
          if (key.kid === kid) signingKeys[index] = { ...key, privateJwk }
        })
      }),
    retireSigningKeys: (keepKid, at) =>
      Effect.sync(() => {
        signingKeys.forEach((key, index) => {
          if (key.kid !== keepKid && key.retiredAt === null) signingKeys[index] = { ...key, retiredAt: at }
        })
      }),

    appendEvent: (event) => Effect.sync(() => void events.push(event)),
    events: ({ kind, limit, since, until, userUid }) =>
      Effect.sync(() =>
        events.filter((event) =>
          (userUid === undefined || event.userUid === userUid) && (kind === undefined || event.kind === kind) &&
          (since === undefined || event.at.getTime() >= since.getTime()) &&
          (until === undefined || event.at.getTime() < until.getTime())
        )
          .map((event, index) => ({ event, index }))
          .sort((a, b) => b.event.at.getTime() - a.event.at.getTime() || b.index - a.index)
          .slice(0, limit)
          .map(({ event }) => event)
      )
  }
}

/** A store of its own in this process: for tests, scripts and embedding without a database. */
export const layerMemory = (): Layer.Layer<SsoStore> =>
  Layer.effect(SsoStore, Effect.map(Effect.makeSemaphore(1), makeMemoryStore))
