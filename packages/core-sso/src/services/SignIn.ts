import { now } from "@civicstack/kit"
import { Context, Duration, Effect, Layer, Metric, Option, Schema } from "effect"
import type { SignInSession, User } from "../domain/records"
import { hashSecret, isSecretShaped, newSecret } from "../domain/secrets"
import { signIns } from "../domain/metrics"
import { StoreError } from "../storage/SsoStore"
import { enqueuePushes } from "./pushQueue"
import { SsoParts } from "./SsoParts"
import { makeThrottle } from "./throttle"
import { hasTwoStep, passSecondStep } from "./TwoStep"

/** Why a sign-in did not succeed, as the sign-in page tells the person. */
export class SignInRefused extends Schema.TaggedError<SignInRefused>()("SignInRefused", {
  reason: Schema.Literal("invalid", "suspended"),
  message: Schema.String
}) {}

/** The two-step code was wrong, used before, or came too late; `signInAgain` when the password must come first. */
export class SecondStepRefused extends Schema.TaggedError<SecondStepRefused>()("SecondStepRefused", {
  message: Schema.String,
  signInAgain: Schema.Boolean
}) {}

export class SignInThrottled extends Schema.TaggedError<SignInThrottled>()("SignInThrottled", {
  retryAfterSeconds: Schema.Number
}) {}

/**
 * What the browser keeps: the session id (its cookie) and the CSRF token of its forms. A session awaiting its second
 * step signs in to nothing until the user's two-step code completes it.
 */
export interface StartedSession {
  readonly sessionId: string
  readonly csrfToken: string
  readonly user: User
  readonly awaitingSecondStep: boolean
}

export interface CurrentSession {
  readonly session: SignInSession
  readonly user: User
}

const INVALID = "The email address or password is not right, or the account is locked. Check them and try again."
export const SECOND_STEP_TOO_LATE =
  "Too long has passed since you entered your password, or you have signed out. Sign in again."
const WRONG_CODE = "That code is not right, or it has been used already. Enter the code your app shows now."
const LOCKED_BY_CODES =
  "Too many wrong codes were entered, so this account is locked for an hour. An administrator can unlock it sooner."

/** Counts a sign-in step by its outcome once it is decided. */
const countedStep = <A, E extends { readonly _tag: string }, R>(step: string, effect: Effect.Effect<A, E, R>) =>
  effect.pipe(Effect.tapBoth({
    onSuccess: () => countStep(step, "succeeded"),
    onFailure: (failure) =>
      failure._tag === "StoreError" ? Effect.void : countStep(step, failure._tag === "SignInThrottled" ? "throttled" : "refused")
  }))

const countStep = (step: string, outcome: string) =>
  Metric.increment(Metric.tagged(Metric.tagged(signIns, "step", step), "outcome", outcome))

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
  /** The session of a session id that awaits its second step, while the code may still come. */
  readonly awaitingSecondStep: (sessionId: string) => Effect.Effect<Option.Option<CurrentSession>, StoreError>
  /**
   * The second step: the app's code or a recovery code. It completes the sign-in with a new session id (the waiting
   * one ends). Wrong codes count towards the account's lock as wrong passwords do.
   */
  readonly secondStep: (input: {
    readonly sessionId: string
    readonly code: string
    readonly address: string
  }) => Effect.Effect<StartedSession, SecondStepRefused | SignInThrottled | StoreError>
  readonly signOut: (sessionId: string) => Effect.Effect<Option.Option<User>, StoreError>
  /**
   * Checks a signed-in user's password again (before changing it): throttled and counted towards the account's lock
   * as a sign-in, so that a session alone does not let anyone guess the password.
   */
  readonly confirmPassword: (input: {
    readonly user: User
    readonly password: string
    readonly address: string
  }) => Effect.Effect<void, SignInRefused | SignInThrottled | StoreError>
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

      /** The session of a session id, seen now; none once idle too long, older than its greatest age, or its user suspended. */
      const live = (sessionId: string, at: Date) =>
        Effect.gen(function*() {
          if (!isSecretShaped(sessionId)) return Option.none<CurrentSession>()
          const idleSince = new Date(at.getTime() - Duration.toMillis(settings.sessionIdleTimeout))
          const session = yield* store.touchSession(hashSecret(sessionId), idleSince, at)
          if (Option.isNone(session)) return Option.none<CurrentSession>()
          if (session.value.authTime.getTime() <= at.getTime() - Duration.toMillis(settings.sessionMaxAge)) {
            yield* store.deleteSession(session.value.idHash)
            return Option.none<CurrentSession>()
          }
          const user = yield* store.userByUid(session.value.userUid)
          if (Option.isNone(user) || user.value.suspendedAt !== null) return Option.none<CurrentSession>()
          return Option.some({ session: session.value, user: user.value })
        })

      const current = (sessionId: string) =>
        Effect.flatMap(now, (at) => Effect.map(live(sessionId, at), Option.filter(({ session }) => !session.awaitingSecondStep)))

      const awaitingSecondStep = (sessionId: string) =>
        Effect.flatMap(now, (at) =>
          Effect.map(
            live(sessionId, at),
            Option.filter(({ session }) =>
              session.awaitingSecondStep &&
              session.authTime.getTime() > at.getTime() - Duration.toMillis(limits.secondStepWithin)
            )
          ))

      const startSession = (user: User, at: Date, awaitingSecondStep: boolean) =>
        Effect.gen(function*() {
          const sessionId = newSecret()
          const csrfToken = newSecret()
          yield* store.insertSession({
            idHash: hashSecret(sessionId),
            userUid: user.uid,
            csrfToken,
            authTime: at,
            lastSeenAt: at,
            awaitingSecondStep
          })
          return { sessionId, csrfToken, user, awaitingSecondStep }
        })

      /**
       * Counts a wrong password or code towards the account's lock; answers whether this one locked it. A lock in force
       * is neither extended nor told apart: the right password gets the wrong one's answer.
       */
      const countFailure = (user: User, at: Date, lockAfter: number, failedKind: string) =>
        Effect.gen(function*() {
          const lockUntil = new Date(at.getTime() + Duration.toMillis(limits.lockFor))
          const counted = yield* store.recordFailedSignIn(user.uid, { at, lockAfter, lockUntil })
          const justLocked = Option.exists(counted, (after) => after.lockedUntil?.getTime() === lockUntil.getTime())
          yield* record(justLocked ? "account_locked" : failedKind, user.uid, justLocked ? { after: failedKind } : {})
          return justLocked
        })

      const isLocked = (user: User, at: Date) => user.lockedUntil !== null && user.lockedUntil.getTime() > at.getTime()

      const service: Context.Tag.Service<SignIn> = {
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
            if (user === null || !rightPassword || isLocked(user, at)) {
              yield* throttle.recordFailure(rules, at)
              if (user !== null && isLocked(user, at)) yield* record("sign_in_refused", user.uid, { reason: "locked" })
              else if (user !== null) yield* countFailure(user, at, limits.lockAfter, "sign_in_failed")
              return yield* new SignInRefused({ reason: "invalid", message: INVALID })
            }
            if (user.suspendedAt !== null) {
              yield* record("sign_in_refused", user.uid, { reason: "suspended" })
              return yield* new SignInRefused({
                reason: "suspended",
                message: "This account is suspended. Ask an administrator if you think this is a mistake."
              })
            }
            // the count of failures goes on until the second step passes, so a known password cannot reset it
            if (yield* hasTwoStep(store, user.uid)) return yield* startSession(user, at, true)
            yield* store.clearFailedSignIns(user.uid)
            const started = yield* startSession(user, at, false)
            yield* record("signed_in", user.uid, { address })
            return started
          }),
        secondStep: ({ address, code, sessionId }) =>
          Effect.gen(function*() {
            const at = yield* now
            const rules = [{ key: `sign-in:${address}`, limit: limits.perAddress }]
            const wait = yield* throttle.retryAfter(rules, at)
            if (wait !== undefined) return yield* new SignInThrottled({ retryAfterSeconds: wait })
            const waiting = yield* awaitingSecondStep(sessionId)
            if (Option.isNone(waiting)) {
              return yield* new SecondStepRefused({ signInAgain: true, message: SECOND_STEP_TOO_LATE })
            }
            const { session, user } = waiting.value
            const lockedOut = Effect.zipRight(
              store.deleteSession(session.idHash),
              new SecondStepRefused({ signInAgain: true, message: LOCKED_BY_CODES })
            )
            if (isLocked(user, at)) return yield* lockedOut
            const method = yield* passSecondStep(store, user.uid, code, at)
            if (Option.isNone(method)) {
              yield* throttle.recordFailure(rules, at)
              if (yield* countFailure(user, at, limits.lockAfterWrongCodes, "two_step_failed")) return yield* lockedOut
              return yield* new SecondStepRefused({ signInAgain: false, message: WRONG_CODE })
            }
            yield* store.clearFailedSignIns(user.uid)
            yield* store.deleteSession(session.idHash)
            const started = yield* startSession(user, at, false)
            yield* record("signed_in", user.uid, { address, second_step: method.value })
            if (method.value === "recovery_code") {
              const left = Option.match(yield* store.twoStepOf(user.uid), {
                onNone: () => 0,
                onSome: (twoStep) => twoStep.recoveryCodesLeft
              })
              yield* record("recovery_code_used", user.uid, { recovery_codes_left: left })
            }
            return started
          }),
        awaitingSecondStep,
        confirmPassword: ({ address, password, user }) =>
          Effect.gen(function*() {
            const at = yield* now
            const rules = [
              { key: `sign-in:${address}`, limit: limits.perAddress },
              { key: `sign-in:${address}:${user.email.toLowerCase()}`, limit: limits.perAccountAndAddress }
            ]
            const wait = yield* throttle.retryAfter(rules, at)
            if (wait !== undefined) return yield* new SignInThrottled({ retryAfterSeconds: wait })
            const current = Option.getOrNull(yield* store.userByUid(user.uid))
            const right = yield* passwords.verifyOrDummy(current?.passwordHash ?? null, password)
            if (current !== null && right && !isLocked(current, at)) return
            yield* throttle.recordFailure(rules, at)
            if (current !== null && !isLocked(current, at)) yield* countFailure(current, at, limits.lockAfter, "password_confirmation_failed")
            return yield* new SignInRefused({ reason: "invalid", message: "Your current password is not right." })
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
      return {
        ...service,
        signIn: (input) => countedStep("password", service.signIn(input)),
        secondStep: (input) => countedStep("second_step", service.secondStep(input))
      }
    })
  )
}

