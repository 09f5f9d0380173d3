import { now } from "@civicstack/kit"
import { Context, Effect, Layer, Option, Schema } from "effect"
import type { Application, User } from "../domain/records"
import { hashSecret } from "../domain/secrets"
import {
  acceptedStep,
  looksLikeRecoveryCode,
  newRecoveryCodes,
  newTotpSecret,
  normalisedRecoveryCode,
  totpUri
} from "../domain/twoStep"
import type { SsoStore, StoreError } from "../storage/SsoStore"
import { Actor, actorDetail } from "./Actor"
import { isAdministrator } from "./access"
import { SsoParts } from "./SsoParts"

/** The code typed at set-up is not the app's code for now (or was typed wrongly). */
export class WrongCode extends Schema.TaggedError<WrongCode>()("WrongCode", {}) {}

/** Two-step verification is on already: it is set up again only after a reset. */
export class AlreadySetUp extends Schema.TaggedError<AlreadySetUp>()("AlreadySetUp", {}) {}

export type TwoStepStatus =
  | { readonly _tag: "Off" }
  | { readonly _tag: "On"; readonly since: Date; readonly recoveryCodesLeft: number }

/** What the set-up page shows: the secret as text and the `otpauth://` URI of its QR code. */
export interface SetUp {
  readonly secret: string
  readonly uri: string
}

/** How a second step passed: with the app's code or with one of the recovery codes. */
export type SecondStepMethod = "code" | "recovery_code"

/**
 * Whether `typed` is the user's code now (each code once) or one of their unused recovery codes (each once); uses it
 * when it is.
 */
export const passSecondStep = (store: SsoStore["Type"], uid: string, typed: string, at: Date) =>
  Effect.gen(function*() {
    if (looksLikeRecoveryCode(typed)) {
      const used = yield* store.useRecoveryCode(uid, hashSecret(normalisedRecoveryCode(typed)), at)
      return used ? Option.some<SecondStepMethod>("recovery_code") : Option.none()
    }
    const twoStep = yield* store.twoStepOf(uid)
    if (Option.isNone(twoStep) || twoStep.value.confirmedAt === null) return Option.none()
    const step = acceptedStep(twoStep.value.secret, typed, at.getTime(), twoStep.value.lastStep)
    if (step === undefined) return Option.none()
    return (yield* store.useTotpStep(uid, step)) ? Option.some<SecondStepMethod>("code") : Option.none()
  })

/** Whether the user has confirmed two-step verification. */
export const hasTwoStep = (store: SsoStore["Type"], uid: string) =>
  Effect.map(store.twoStepOf(uid), Option.exists((twoStep) => twoStep.confirmedAt !== null))

/** Required of every administrator of the sign-on, and of the users of an application that requires it. */
export const twoStepRequired = (store: SsoStore["Type"], uid: string, application?: Application) =>
  Effect.gen(function*() {
    if (application?.requireTwoStep === true) return true
    return yield* isAdministrator(store, uid)
  })

/**
 * Two-step verification with a TOTP app (RFC 6238): setting it up from the account page, whom it is required of, and
 * ops' reset. The second step of signing in is `SignIn`'s.
 */
export class TwoStepVerification extends Context.Tag("@civicstack/core-sso/TwoStepVerification")<TwoStepVerification, {
  /** Required of every administrator of the sign-on, and of the users of an application that requires it. */
  readonly required: (user: User, application?: Application) => Effect.Effect<boolean, StoreError>
  readonly status: (uid: string) => Effect.Effect<TwoStepStatus, StoreError>
  /** Starts, or shows again, the user's set-up: the same secret until it is confirmed, so a reload shows it again. */
  readonly begin: (user: User) => Effect.Effect<SetUp, AlreadySetUp | StoreError>
  /**
   * Confirms the set-up with a code from the app and answers ten recovery codes, shown this once (only their hashes
   * are kept). The user's other browser sessions end: they were signed in with the password alone.
   */
  readonly confirm: (
    user: User,
    code: string,
    keepSessionHash: string
  ) => Effect.Effect<ReadonlyArray<string>, WrongCode | AlreadySetUp | StoreError>
  /** Removes it, for a user who lost their app and recovery codes; they set it up again if it is required of them. */
  readonly reset: (uid: string) => Effect.Effect<boolean, StoreError>
  /** Gives the user this secret, confirmed, with no recovery codes (bootstrap files, for automated sign-ins). */
  readonly give: (uid: string, secret: string) => Effect.Effect<void, StoreError>
}>() {
  static readonly layer = Layer.effect(
    TwoStepVerification,
    Effect.gen(function*() {
      const { settings, store } = yield* SsoParts
      const issuerName = new URL(settings.issuer).host

      const record = (kind: string, uid: string, detail: Record<string, unknown> = {}) =>
        Effect.gen(function*() {
          const actor = actorDetail(yield* Actor)
          yield* store.appendEvent({ at: yield* now, kind, userUid: uid, applicationId: null, detail: { ...detail, actor } })
        })

      const setUpInProgress = (user: User) =>
        Effect.gen(function*() {
          const twoStep = yield* store.beginTwoStep(user.uid, newTotpSecret())
          if (twoStep.confirmedAt !== null) return yield* new AlreadySetUp()
          return twoStep
        })

      return {
        required: (user, application) => twoStepRequired(store, user.uid, application),
        status: (uid) =>
          Effect.map(store.twoStepOf(uid), (found): TwoStepStatus =>
            Option.isSome(found) && found.value.confirmedAt !== null
              ? { _tag: "On", since: found.value.confirmedAt, recoveryCodesLeft: found.value.recoveryCodesLeft }
              : { _tag: "Off" }),
        begin: (user) =>
          Effect.map(setUpInProgress(user), ({ secret }) => ({ secret, uri: totpUri(secret, user.email, issuerName) })),
        confirm: (user, code, keepSessionHash) =>
          Effect.gen(function*() {
            const { secret } = yield* setUpInProgress(user)
            const at = yield* now
            const step = acceptedStep(secret, code, at.getTime(), null)
            if (step === undefined) return yield* new WrongCode()
            const recoveryCodes = newRecoveryCodes()
            const confirmed = yield* store.confirmTwoStep(user.uid, {
              at,
              lastStep: step,
              recoveryCodeHashes: recoveryCodes.map(hashSecret)
            })
            if (!confirmed) return yield* new AlreadySetUp()
            yield* store.deleteSessionsOf(user.uid, { except: keepSessionHash })
            yield* record("two_step_set_up", user.uid)
            return recoveryCodes
          }),
        reset: (uid) =>
          Effect.gen(function*() {
            const removed = yield* store.removeTwoStep(uid)
            if (removed) yield* record("two_step_reset", uid)
            return removed
          }),
        give: (uid, secret) =>
          Effect.gen(function*() {
            const found = yield* store.twoStepOf(uid)
            if (Option.exists(found, (twoStep) => twoStep.secret === secret && twoStep.confirmedAt !== null)) return
            yield* store.atomically(Effect.gen(function*() {
              yield* store.removeTwoStep(uid)
              yield* store.beginTwoStep(uid, secret)
              yield* store.confirmTwoStep(uid, { at: yield* now, lastStep: null, recoveryCodeHashes: [] })
              yield* record("two_step_set_up", uid)
            }))
          })
      }
    })
  )
}
