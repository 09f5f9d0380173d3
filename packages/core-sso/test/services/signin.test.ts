import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Option, TestClock } from "effect"
import { layerMemory } from "../../src/layers"
import { Directory } from "../../src/services/Directory"
import { SignIn } from "../../src/services/SignIn"
import { PASSWORD, publisherAndAda } from "../fixtures/harness"

const sso = () => layerMemory()

const attempt = (email: string, password: string, address = "192.0.2.1") =>
  Effect.flatMap(SignIn, (signIn) => Effect.either(signIn.signIn({ email, password, address })))

const wrongPasswordsFromSixAddresses = Effect.forEach(
  [0, 1, 2, 3, 4, 5],
  (n) => attempt("ada@example.com", `wrong password ${n}`, `198.51.100.${n}`),
  { discard: true }
)

const refusal = (result: Either.Either<unknown, unknown>) => Option.getOrThrow(Either.getLeft(result))

describe("SignIn", () => {
  it.effect("an unknown email and a wrong password get the same answer", () =>
    Effect.gen(function*() {
      yield* publisherAndAda
      const unknown = refusal(yield* attempt("nobody@example.com", PASSWORD))
      const wrong = refusal(yield* attempt("ada@example.com", "not the password"))
      expect(unknown).toEqual(wrong)
      expect(Either.isRight(yield* attempt("ADA@example.com", PASSWORD))).toBe(true)
    }).pipe(Effect.provide(sso())))

  it.effect("the 6th wrong password in a row locks the account for an hour; an admin can unlock it", () =>
    Effect.gen(function*() {
      const { ada } = yield* publisherAndAda
      yield* wrongPasswordsFromSixAddresses
      expect(Either.isLeft(yield* attempt("ada@example.com", PASSWORD))).toBe(true)
      yield* TestClock.adjust("59 minutes")
      expect(Either.isLeft(yield* attempt("ada@example.com", PASSWORD))).toBe(true)
      yield* (yield* Directory).unlock(ada.uid)
      expect(Either.isRight(yield* attempt("ada@example.com", PASSWORD))).toBe(true)
      const events = yield* (yield* Directory).events({ userUid: ada.uid })
      expect(events.map((event) => event.kind)).toContain("account_locked")
    }).pipe(Effect.provide(sso())))

  it.effect("while an account is locked its right password gets a wrong one's answer", () =>
    Effect.gen(function*() {
      yield* publisherAndAda
      yield* wrongPasswordsFromSixAddresses
      const right = refusal(yield* attempt("ada@example.com", PASSWORD, "203.0.113.1"))
      const wrong = refusal(yield* attempt("ada@example.com", "still wrong", "203.0.113.2"))
      const unknown = refusal(yield* attempt("nobody@example.com", PASSWORD, "203.0.113.3"))
      expect(right).toEqual(wrong)
      expect(right).toEqual(unknown)
    }).pipe(Effect.provide(sso())))

  it.effect("a lock ends by itself after an hour, and attempts during it do not extend it", () =>
    Effect.gen(function*() {
      yield* publisherAndAda
      yield* wrongPasswordsFromSixAddresses
      for (let minute = 0; minute < 6; minute++) {
        yield* TestClock.adjust("10 minutes")
        yield* attempt("ada@example.com", "a stranger's guess", `203.0.113.${minute}`)
      }
      expect(Either.isRight(yield* attempt("ada@example.com", PASSWORD))).toBe(true)
    }).pipe(Effect.provide(sso())))

  it.effect("5 wrong passwords for one account from one address make that address wait, not the owner", () =>
    Effect.gen(function*() {
      yield* publisherAndAda
      for (let wrong = 0; wrong < 5; wrong++) yield* attempt("ada@example.com", `wrong password ${wrong}`, "198.51.100.7")
      expect(refusal(yield* attempt("ada@example.com", PASSWORD, "198.51.100.7"))).toMatchObject({ _tag: "SignInThrottled" })
      expect(Either.isRight(yield* attempt("ada@example.com", PASSWORD, "192.0.2.1"))).toBe(true)
    }).pipe(Effect.provide(sso())))

  it.effect("30 failures from one address make it wait, whatever the account", () =>
    Effect.gen(function*() {
      yield* publisherAndAda
      for (let wrong = 0; wrong < 30; wrong++) yield* attempt(`user${wrong}@example.com`, "wrong password")
      expect(refusal(yield* attempt("ada@example.com", PASSWORD))).toMatchObject({ _tag: "SignInThrottled" })
      expect(Either.isRight(yield* attempt("ada@example.com", PASSWORD, "192.0.2.99"))).toBe(true)
    }).pipe(Effect.provide(sso())))

  it.effect("a session ends after 30 idle minutes, and at sign-out", () =>
    Effect.gen(function*() {
      yield* publisherAndAda
      const signIn = yield* SignIn
      const started = yield* signIn.signIn({ email: "ada@example.com", password: PASSWORD, address: "192.0.2.1" })
      yield* TestClock.adjust("29 minutes")
      expect(Option.isSome(yield* signIn.current(started.sessionId))).toBe(true)
      yield* TestClock.adjust("29 minutes")
      expect(Option.isSome(yield* signIn.current(started.sessionId))).toBe(true)
      yield* TestClock.adjust("30 minutes")
      expect(yield* signIn.current(started.sessionId)).toEqual(Option.none())
      const again = yield* signIn.signIn({ email: "ada@example.com", password: PASSWORD, address: "192.0.2.1" })
      expect(Option.isSome(yield* signIn.signOut(again.sessionId))).toBe(true)
      expect(yield* signIn.current(again.sessionId)).toEqual(Option.none())
    }).pipe(Effect.provide(sso())))

  it.effect("a session ends 20 hours after its sign-in however active it is, and at a password change", () =>
    Effect.gen(function*() {
      const { ada } = yield* publisherAndAda
      const signIn = yield* SignIn
      const started = yield* signIn.signIn({ email: "ada@example.com", password: PASSWORD, address: "192.0.2.1" })
      // 41 times 29 minutes is 19 hours 49 minutes, each visit within the idle timeout
      for (let step = 0; step < 41; step++) {
        yield* TestClock.adjust("29 minutes")
        expect(Option.isSome(yield* signIn.current(started.sessionId))).toBe(true)
      }
      yield* TestClock.adjust("29 minutes")
      expect(yield* signIn.current(started.sessionId)).toEqual(Option.none())
      const again = yield* signIn.signIn({ email: "ada@example.com", password: PASSWORD, address: "192.0.2.1" })
      yield* (yield* Directory).setPassword(ada.uid, "another long enough password")
      expect(yield* signIn.current(again.sessionId)).toEqual(Option.none())
    }).pipe(Effect.provide(sso())))

  it.effect("suspension ends the user's sessions", () =>
    Effect.gen(function*() {
      const { ada } = yield* publisherAndAda
      const signIn = yield* SignIn
      const started = yield* signIn.signIn({ email: "ada@example.com", password: PASSWORD, address: "192.0.2.1" })
      yield* (yield* Directory).suspend(ada.uid, "Left")
      expect(yield* signIn.current(started.sessionId)).toEqual(Option.none())
      expect(refusal(yield* attempt("ada@example.com", PASSWORD))).toMatchObject({ reason: "suspended" })
    }).pipe(Effect.provide(sso())))
})
