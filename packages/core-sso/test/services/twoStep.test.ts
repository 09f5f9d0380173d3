import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Either, Option, TestClock } from "effect"
import { totpCode } from "../../src/domain/twoStep"
import { layerMemory } from "../../src/layers"
import { Actor } from "../../src/services/Actor"
import { Authorization } from "../../src/services/Authorization"
import { Directory } from "../../src/services/Directory"
import { SignIn } from "../../src/services/SignIn"
import { TwoStepVerification } from "../../src/services/TwoStep"
import { hashSecret } from "../../src/domain/secrets"
import { authorizeQuery, PASSWORD, publisherAndAda } from "../fixtures/harness"

const sso = () => layerMemory()

const ADDRESS = "192.0.2.1"

/** The code Ada's app shows now, `offsetSteps` steps of 30 seconds away. */
const codeNow = (secret: string, offsetSteps = 0) =>
  Effect.map(Clock.currentTimeMillis, (millis) => totpCode(secret, millis + offsetSteps * 30_000))

const signInWithPassword = (password = PASSWORD, address = ADDRESS) =>
  Effect.flatMap(SignIn, (signIn) => signIn.signIn({ email: "ada@example.com", password, address }))

const secondStep = (sessionId: string, code: string, address = ADDRESS) =>
  Effect.flatMap(SignIn, (signIn) => Effect.either(signIn.secondStep({ sessionId, code, address })))

/** Ada with two-step verification set up from her account page: her secret and recovery codes. */
const adaWithTwoStep = Effect.gen(function*() {
  const { ada, clientId } = yield* publisherAndAda
  const twoStep = yield* TwoStepVerification
  // a time well past the epoch, as a real clock's
  yield* TestClock.setTime(Date.parse("2026-11-28T10:00:00Z"))
  const session = yield* signInWithPassword()
  const { secret } = yield* twoStep.begin(ada)
  const recoveryCodes = yield* twoStep.confirm(ada, yield* codeNow(secret), hashSecret(session.sessionId))
  // the set-up's own code is used: the next one comes in the next step
  yield* TestClock.adjust("30 seconds")
  return { ada, clientId, secret, recoveryCodes }
})

const eventKinds = (uid: string) =>
  Effect.map(Effect.flatMap(Directory, (directory) => directory.events({ userUid: uid })), (events) => events.map((event) => event.kind))

describe("two-step verification", () => {
  it.effect("the set-up shows one secret until a right code confirms it, then ten recovery codes", () =>
    Effect.gen(function*() {
      const { ada } = yield* publisherAndAda
      const twoStep = yield* TwoStepVerification
      const first = yield* twoStep.begin(ada)
      expect(first.secret).toMatch(/^[A-Z2-7]{32}$/)
      expect(first.uri).toContain(`secret=${first.secret}`)
      expect((yield* twoStep.begin(ada)).secret).toBe(first.secret)
      expect(yield* Effect.flip(twoStep.confirm(ada, "000000", "no-session"))).toMatchObject({ _tag: "WrongCode" })
      expect(yield* twoStep.status(ada.uid)).toEqual({ _tag: "Off" })
      const codes = yield* twoStep.confirm(ada, yield* codeNow(first.secret), "no-session")
      expect(codes).toHaveLength(10)
      expect(yield* twoStep.status(ada.uid)).toMatchObject({ _tag: "On", recoveryCodesLeft: 10 })
      expect(yield* Effect.flip(twoStep.begin(ada))).toMatchObject({ _tag: "AlreadySetUp" })
      expect(yield* eventKinds(ada.uid)).toContain("two_step_set_up")
    }).pipe(Effect.provide(sso())))

  it.effect("turning it on ends the user's other sessions, signed in with the password alone", () =>
    Effect.gen(function*() {
      const { ada } = yield* publisherAndAda
      const signIn = yield* SignIn
      const elsewhere = yield* signInWithPassword()
      const here = yield* signInWithPassword()
      const twoStep = yield* TwoStepVerification
      const { secret } = yield* twoStep.begin(ada)
      yield* twoStep.confirm(ada, yield* codeNow(secret), hashSecret(here.sessionId))
      expect(Option.isSome(yield* signIn.current(here.sessionId))).toBe(true)
      expect(yield* signIn.current(elsewhere.sessionId)).toEqual(Option.none())
    }).pipe(Effect.provide(sso())))

  it.effect("after the password a session waits for the code; the code completes it with a new session id", () =>
    Effect.gen(function*() {
      const { ada, secret } = yield* adaWithTwoStep
      const signIn = yield* SignIn
      const waiting = yield* signInWithPassword()
      expect(waiting.awaitingSecondStep).toBe(true)
      expect(yield* signIn.current(waiting.sessionId)).toEqual(Option.none())
      expect(Option.isSome(yield* signIn.awaitingSecondStep(waiting.sessionId))).toBe(true)
      const done = yield* secondStep(waiting.sessionId, yield* codeNow(secret))
      const started = Either.getOrThrow(done)
      expect(started.awaitingSecondStep).toBe(false)
      expect(started.sessionId).not.toBe(waiting.sessionId)
      expect(Option.getOrThrow(yield* signIn.current(started.sessionId)).user.uid).toBe(ada.uid)
      expect(yield* signIn.awaitingSecondStep(waiting.sessionId)).toEqual(Option.none())
    }).pipe(Effect.provide(sso())))

  it.effect("a code works once: the same code again, or an older one, is refused", () =>
    Effect.gen(function*() {
      const { secret } = yield* adaWithTwoStep
      const code = yield* codeNow(secret)
      const first = yield* signInWithPassword()
      expect(Either.isRight(yield* secondStep(first.sessionId, code))).toBe(true)
      const second = yield* signInWithPassword()
      expect(yield* secondStep(second.sessionId, code)).toMatchObject({ left: { _tag: "SecondStepRefused", signInAgain: false } })
      expect(yield* secondStep(second.sessionId, yield* codeNow(secret, -1))).toMatchObject({ left: { _tag: "SecondStepRefused" } })
      // a clock one step ahead is forgiven, once
      expect(Either.isRight(yield* secondStep(second.sessionId, yield* codeNow(secret, 1)))).toBe(true)
    }).pipe(Effect.provide(sso())))

  it.effect("a recovery code signs in once, however it is typed", () =>
    Effect.gen(function*() {
      const { ada, recoveryCodes } = yield* adaWithTwoStep
      const code = recoveryCodes[3]!
      const first = yield* signInWithPassword()
      expect(Either.isRight(yield* secondStep(first.sessionId, ` ${code.toUpperCase().replaceAll("-", " ")} `))).toBe(true)
      const second = yield* signInWithPassword()
      expect(yield* secondStep(second.sessionId, code)).toMatchObject({ left: { _tag: "SecondStepRefused" } })
      expect(yield* (yield* TwoStepVerification).status(ada.uid)).toMatchObject({ recoveryCodesLeft: 9 })
      const events = yield* (yield* Directory).events({ userUid: ada.uid })
      expect(events.find((event) => event.kind === "recovery_code_used")?.detail).toMatchObject({ recovery_codes_left: 9 })
    }).pipe(Effect.provide(sso())))

  it.effect("the code must come within 10 minutes of the password", () =>
    Effect.gen(function*() {
      const { secret } = yield* adaWithTwoStep
      const waiting = yield* signInWithPassword()
      yield* TestClock.adjust("10 minutes")
      expect(yield* secondStep(waiting.sessionId, yield* codeNow(secret))).toMatchObject({
        left: { _tag: "SecondStepRefused", signInAgain: true }
      })
    }).pipe(Effect.provide(sso())))

  it.effect("ten wrong codes lock the account; signing in again does not restart the count", () =>
    Effect.gen(function*() {
      const { ada, secret } = yield* adaWithTwoStep
      for (let round = 0; round < 3; round++) {
        const waiting = yield* signInWithPassword(PASSWORD, `198.51.100.${round}`)
        for (let wrong = 0; wrong < 3; wrong++) {
          expect(yield* secondStep(waiting.sessionId, "000000", `198.51.100.${round}`)).toMatchObject({
            left: { signInAgain: false }
          })
        }
      }
      const last = yield* signInWithPassword(PASSWORD, "198.51.100.9")
      expect(yield* secondStep(last.sessionId, "000000", "198.51.100.9")).toMatchObject({
        left: { _tag: "SecondStepRefused", signInAgain: true, message: expect.stringContaining("locked") }
      })
      expect(yield* eventKinds(ada.uid)).toContain("account_locked")
      // locked: the right password gets a wrong one's answer, and no code is asked for
      expect(yield* Effect.flip(signInWithPassword(PASSWORD, "203.0.113.1"))).toMatchObject({ _tag: "SignInRefused" })
      yield* TestClock.adjust("61 minutes")
      const again = yield* signInWithPassword(PASSWORD, "203.0.113.2")
      expect(Either.isRight(yield* secondStep(again.sessionId, yield* codeNow(secret), "203.0.113.2"))).toBe(true)
    }).pipe(Effect.provide(sso())))

  it.effect("is required of administrators and of an application's users when it asks; until then no code is given", () =>
    Effect.gen(function*() {
      const { ada, clientId } = yield* publisherAndAda
      const directory = yield* Directory
      const twoStep = yield* TwoStepVerification
      const authorization = yield* Authorization
      expect(yield* twoStep.required(ada)).toBe(false)
      const authorize = Effect.flatMap(signInWithPassword(), (started) =>
        authorization.authorize(authorizeQuery(clientId), Option.some({ user: started.user, authTime: new Date(0) })))
      expect((yield* authorize)._tag).toBe("Redirect")
      const strict = yield* directory.createApplication({
        name: "Strict",
        homeUri: "https://strict.example",
        redirectUris: ["https://strict.example/callback"],
        requireTwoStep: true
      })
      expect(yield* twoStep.required(ada, strict.application)).toBe(true)
      yield* directory.setPermissions(ada.uid, "Strict", ["signin"])
      const strictQuery = authorizeQuery(strict.clientId, { redirect_uri: "https://strict.example/callback" })
      const started = yield* signInWithPassword()
      const signed = Option.some({ user: started.user, authTime: new Date(0) })
      expect((yield* authorization.authorize(strictQuery, signed))._tag).toBe("TwoStepSetUpRequired")
      yield* directory.createApplication({ name: "sso", homeUri: "https://sso.example", redirectUris: [], permissions: ["admin"] })
      yield* directory.setPermissions(ada.uid, "sso", ["signin", "admin"])
      expect(yield* twoStep.required(ada)).toBe(true)
      expect((yield* authorize)._tag).toBe("TwoStepSetUpRequired")
      const { secret } = yield* twoStep.begin(ada)
      yield* twoStep.confirm(ada, yield* codeNow(secret), hashSecret(started.sessionId))
      expect((yield* authorization.authorize(strictQuery, signed))._tag).toBe("Redirect")
    }).pipe(Effect.provide(sso())))

  it.effect("ops' reset removes it, with an event naming who did it; the password alone signs in again", () =>
    Effect.gen(function*() {
      const { ada } = yield* adaWithTwoStep
      const twoStep = yield* TwoStepVerification
      expect(yield* twoStep.reset(ada.uid).pipe(Effect.provideService(Actor, { kind: "cli" }))).toBe(true)
      expect(yield* twoStep.reset(ada.uid)).toBe(false)
      expect((yield* signInWithPassword()).awaitingSecondStep).toBe(false)
      const events = yield* (yield* Directory).events({ userUid: ada.uid })
      expect(events.find((event) => event.kind === "two_step_reset")?.detail).toEqual({ actor: { kind: "cli" } })
    }).pipe(Effect.provide(sso())))

  it.effect("a secret given by ops (a bootstrap file) is on at once, and giving it again changes nothing", () =>
    Effect.gen(function*() {
      const { ada } = yield* publisherAndAda
      const twoStep = yield* TwoStepVerification
      const secret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"
      yield* TestClock.setTime(Date.parse("2026-11-28T10:00:00Z"))
      yield* twoStep.give(ada.uid, secret)
      yield* twoStep.give(ada.uid, secret)
      expect((yield* eventKinds(ada.uid)).filter((kind) => kind === "two_step_set_up")).toHaveLength(1)
      const waiting = yield* signInWithPassword()
      expect(Either.isRight(yield* secondStep(waiting.sessionId, yield* codeNow(secret)))).toBe(true)
    }).pipe(Effect.provide(sso())))
})
