import { now } from "@civicstack/kit"
import { Context, Duration, Effect, Layer, Option, Schema } from "effect"
import type { SignInSession, User } from "../domain/records"
import { hashSecret, isSecretShaped, newSecret } from "../domain/secrets"
import { StoreError } from "../storage/SsoStore"
import { enqueuePushes } from "./pushQueue"
import { SsoParts } from "./SsoParts"
import { makeThrottle } from "./throttle"

/** Why a sign-in did not succeed, as the sign-in page tells the person. */
export class SignInRefused extends Schema.TaggedError<SignInRefused>()("SignInRefused", {
  reason: Schema.Literal("invalid", "suspended"),
  message: Schema.String
}) {}

export class SignInThrottled extends Schema.TaggedError<SignInThrottled>()("SignInThrottled", {
  retryAfterSeconds: Schema.Number
}) {}

/** What the browser keeps: the session id (its cookie) and the CSRF token of its forms. */
export interface StartedSession {
  readonly sessionId: string
  readonly csrfToken: string
  readonly user: User
}

export interface CurrentSession {
  readonly session: SignInSession
  readonly user: User
}

const INVALID = "The email address or password is not right, or the account is locked. Check them and try again."

/**
 * Signing in with a password and the browser sessions that follow. An unknown email, a wrong password and any
 * password of a locked account cost the same work and get the same answer, so that a lock never tells a guess is
 * right; that an account is suspended is told only to someone who gave its right password.
 */
export class SignIn extends Context.Tag("@civicstack/core-sso/SignIn")<SignIn, {
  readonly signIn: (input: {
    readonly email: string
    readonly password: string
    readonly address: string
  }) => Effect.Effect<StartedSession, SignInRefused | SignInThrottled | StoreError>
  /**
   * The signed-in session of a session id, seen now; none once idle for longer than the idle timeout, or older than
   * the session's greatest age.
   */
  readonly current: (sessionId: string) => Effect.Effect<Option.Option<CurrentSession>, StoreError>
  readonly signOut: (sessionId: string) => Effect.Effect<Option.Option<User>, StoreError>
}>() {
  static readonly layer = Layer.effect(
    SignIn,
    Effect.gen(function*() {
      const parts = yield* SsoParts
      const { passwords, settings, store } = parts
      const limits = settings.signIn
      const throttle = makeThrottle(store, limits.window)

      const record = (kind: string, userUid: string | null, detail: Record<string, unknown> = {}) =>
        Effect.flatMap(now, (at) => store.appendEvent({ at, kind, userUid, applicationId: null, detail }))

      const current = (sessionId: string) =>
        Effect.gen(function*() {
          if (!isSecretShaped(sessionId)) return Option.none()
          const at = yield* now
          const idleSince = new Date(at.getTime() - Duration.toMillis(settings.sessionIdleTimeout))
          const session = yield* store.touchSession(hashSecret(sessionId), idleSince, at)
          if (Option.isNone(session)) return Option.none()
          if (session.value.authTime.getTime() <= at.getTime() - Duration.toMillis(settings.sessionMaxAge)) {
            yield* store.deleteSession(session.value.idHash)
            return Option.none()
          }
          const user = yield* store.userByUid(session.value.userUid)
          if (Option.isNone(user) || user.value.suspendedAt !== null) return Option.none()
          return Option.some({ session: session.value, user: user.value })
        })

      /** A lock in force is neither extended nor told apart: the right password gets the wrong one's answer. */
      const countFailure = (user: User, at: Date, locked: boolean) =>
        Effect.gen(function*() {
          if (locked) return yield* record("sign_in_refused", user.uid, { reason: "locked" })
          const counted = yield* store.recordFailedSignIn(user.uid, {
            at,
            lockAfter: limits.lockAfter,
            lockUntil: new Date(at.getTime() + Duration.toMillis(limits.lockFor))
          })
          const justLocked = Option.exists(counted, (after) => after.failedSignIns === limits.lockAfter)
          yield* record(justLocked ? "account_locked" : "sign_in_failed", user.uid)
        })

      return {
        signIn: ({ address, email, password }) =>
          Effect.gen(function*() {
            const at = yield* now
            const account = email.trim().toLowerCase()
            const rules = [
              { key: `sign-in:${address}`, limit: limits.perAddress },
              { key: `sign-in:${address}:${account}`, limit: limits.perAccountAndAddress }
            ]
            const wait = yield* throttle.retryAfter(rules, at)
            if (wait !== undefined) return yield* new SignInThrottled({ retryAfterSeconds: wait })
            const user = Option.getOrNull(yield* store.userByEmail(email.trim()))
            const rightPassword = yield* passwords.verifyOrDummy(user?.passwordHash ?? null, password)
            const locked = user?.lockedUntil != null && user.lockedUntil.getTime() > at.getTime()
            if (user === null || !rightPassword || locked) {
              yield* throttle.recordFailure(rules, at)
              if (user !== null) yield* countFailure(user, at, locked)
              return yield* new SignInRefused({ reason: "invalid", message: INVALID })
            }
            if (user.suspendedAt !== null) {
              yield* record("sign_in_refused", user.uid, { reason: "suspended" })
              return yield* new SignInRefused({
                reason: "suspended",
                message: "This account is suspended. Ask an administrator if you think this is a mistake."
              })
            }
            yield* store.clearFailedSignIns(user.uid)
            const sessionId = newSecret()
            const csrfToken = newSecret()
            yield* store.insertSession({ idHash: hashSecret(sessionId), userUid: user.uid, csrfToken, authTime: at, lastSeenAt: at })
            yield* record("signed_in", user.uid)
            return { sessionId, csrfToken, user }
          }),
        current,
        signOut: (sessionId) =>
          Effect.gen(function*() {
            const signedIn = yield* current(sessionId)
            if (Option.isNone(signedIn)) return Option.none()
            const { user } = signedIn.value
            yield* store.atomically(Effect.gen(function*() {
              yield* store.deleteSession(signedIn.value.session.idHash)
              yield* record("signed_out", user.uid)
              yield* enqueuePushes(user.uid, ["reauth"]).pipe(
                Effect.provideService(SsoParts, parts),
                Effect.catchTag("JobQueueError", (cause) => new StoreError({ message: "sso: queueing pushes failed", cause }))
              )
            }))
            return Option.some(signedIn.value.user)
          })
      }
    })
  )
}

