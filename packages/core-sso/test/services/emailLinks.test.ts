import { describe, expect, it } from "@effect/vitest"
import { Context, Duration, Effect, Either, Layer, Ref, TestClock } from "effect"
import { layerMemory, workers } from "../../src/layers"
import { Actor } from "../../src/services/Actor"
import { Directory } from "../../src/services/Directory"
import { EmailLinks } from "../../src/services/EmailLinks"
import { Mailer, MailNotSent } from "../../src/services/Mailer"
import type { MailMessage } from "../../src/services/Mailer"
import { SignIn } from "../../src/services/SignIn"
import { eventuallyEffect } from "../fixtures/eventually"
import { PASSWORD, publisherAndAda } from "../fixtures/harness"

const ISSUER = "https://signon.example"
const NEW_PASSWORD = "a brand new passphrase"
const ADDRESS = "192.0.2.1"

/** A mailer that keeps what it sends, and fails the next sends as `failures` says. */
class TestMailer extends Context.Tag("TestMailer")<TestMailer, {
  readonly sent: Ref.Ref<ReadonlyArray<MailMessage>>
  readonly failures: Ref.Ref<ReadonlyArray<"temporary" | "permanent">>
}>() {}

const testMailer = Layer.effectContext(Effect.gen(function*() {
  const sent = yield* Ref.make<ReadonlyArray<MailMessage>>([])
  const failures = yield* Ref.make<ReadonlyArray<"temporary" | "permanent">>([])
  const send = (message: MailMessage) =>
    Effect.flatMap(Ref.modify(failures, ([next, ...rest]) => [next, rest]), (failure) =>
      failure === undefined
        ? Ref.update(sent, (all) => [...all, message])
        : Effect.fail(new MailNotSent({ reason: `the provider said no (${failure})`, permanent: failure === "permanent" })))
  return Context.make(Mailer, { send }).pipe(Context.add(TestMailer, { sent, failures }))
}))

/**
 * The SSO in memory with its workers sending through the test mailer. Its links and limits last minutes, not days: the
 * workers poll every second of test time, so the clock is moved on by minutes at most.
 */
const sso = () => {
  const service = layerMemory({
    issuer: ISSUER,
    emailLinks: {
      invitationLifetime: Duration.minutes(7),
      passwordResetLifetime: Duration.minutes(2),
      resetsPerAddress: 4,
      resetsPerEmail: 3,
      window: Duration.minutes(5)
    }
  })
  const mailer = testMailer
  return Layer.mergeAll(service, mailer, workers.pipe(Layer.provide(service), Layer.provide(mailer)))
}

const sentMessages = Effect.flatMap(TestMailer, ({ sent }) => Ref.get(sent))

const sentCount = (count: number) => eventuallyEffect(Effect.map(sentMessages, (all) => all.length >= count))

/** The token of the link in an email, and the URL it is in. */
const linkIn = (message: MailMessage) => {
  const url = /\((https:\/\/[^)]+)\)/.exec(message.body)?.[1]
  expect(url).toBeDefined()
  const parsed = new URL(url!)
  expect(`${parsed.origin}${parsed.pathname}`).toBe(`${ISSUER}/users/password/edit`)
  return parsed.searchParams.get("token")!
}

const lastLink = Effect.map(sentMessages, (all) => linkIn(all[all.length - 1]!))

const eventsOf = (uid: string) =>
  Effect.flatMap(Directory, (directory) => directory.events({ userUid: uid }))

const signInAs = (email: string, password: string, address = ADDRESS) =>
  Effect.flatMap(SignIn, (signIn) => Effect.either(signIn.signIn({ email, password, address })))

const requestReset = (email: string, address = ADDRESS) =>
  Effect.flatMap(EmailLinks, (links) => Effect.either(links.requestPasswordReset({ email, address })))

describe("invitations and password resets by email", () => {
  it.effect("an invitation sends a one-time link that sets the first password; the email holds no name", () =>
    Effect.gen(function*() {
      const links = yield* EmailLinks
      const invited = yield* links.invite({ name: "Grace [click](https://evil.example)", email: "grace@example.com" })
      expect(invited.user.passwordHash).toBeNull()
      yield* sentCount(1)
      const [message] = yield* sentMessages
      expect(message).toMatchObject({ to: "grace@example.com", subject: "You are invited to sign in" })
      expect(message!.body).not.toContain("evil.example")
      expect(message!.body).toContain("7 minutes")
      const token = linkIn(message!)
      expect((yield* links.inspect(token)).link.purpose).toBe("invitation")
      expect(Either.isLeft(yield* signInAs("grace@example.com", NEW_PASSWORD))).toBe(true)
      yield* links.setPassword(token, NEW_PASSWORD)
      expect(Either.isRight(yield* signInAs("grace@example.com", NEW_PASSWORD))).toBe(true)
      expect(yield* Effect.flip(links.setPassword(token, "another passphrase"))).toMatchObject({ reason: "used" })
      expect(yield* Effect.flip(links.inspect(token))).toMatchObject({ reason: "used" })
      // she has a password: no further invitation
      expect(yield* Effect.flip(links.resendInvitation(invited.user.uid))).toMatchObject({ _tag: "InvalidInput" })
      const kinds = (yield* eventsOf(invited.user.uid)).map((event) => event.kind).filter((kind) => !kind.startsWith("sign"))
      expect(kinds).toEqual(["password_changed", "invitation_email", "invitation_queued", "user_created"])
    }).pipe(Effect.provide(sso())))

  it.effect("an invitation's link ends with its lifetime, and a resent one works", () =>
    Effect.gen(function*() {
      const links = yield* EmailLinks
      const invited = yield* links.invite({ name: "Grace", email: "grace@example.com" })
      yield* sentCount(1)
      const first = yield* lastLink
      yield* TestClock.adjust("7 minutes")
      expect(yield* Effect.flip(links.inspect(first))).toMatchObject({ reason: "expired" })
      expect(yield* Effect.flip(links.setPassword(first, NEW_PASSWORD))).toMatchObject({ reason: "expired" })
      yield* links.resendInvitation(invited.user.uid)
      yield* sentCount(2)
      yield* links.setPassword(yield* lastLink, NEW_PASSWORD)
      expect(Either.isRight(yield* signInAs("grace@example.com", NEW_PASSWORD))).toBe(true)
    }).pipe(Effect.provide(sso())))

  it.effect("a reset is answered alike for any address, and only a user's address gets an email, for a short time", () =>
    Effect.gen(function*() {
      yield* publisherAndAda
      expect(yield* requestReset("nobody@example.com")).toEqual(Either.right(undefined))
      expect(yield* requestReset("ADA@example.com")).toEqual(Either.right(undefined))
      yield* sentCount(1)
      // the unknown address's job has run too (it came first): still one email
      yield* TestClock.adjust("10 seconds")
      const sent = yield* sentMessages
      expect(sent.map((message) => [message.to, message.subject])).toEqual([["ada@example.com", "Reset your password"]])
      expect(sent[0]!.body).toContain("2 minutes")
      const token = linkIn(sent[0]!)
      yield* TestClock.adjust("2 minutes")
      expect(yield* Effect.flip(Effect.flatMap(EmailLinks, (links) => links.inspect(token)))).toMatchObject({ reason: "expired" })
    }).pipe(Effect.provide(sso())))

  it.effect("a new password through a link ends the other links, the sessions and the lock", () =>
    Effect.gen(function*() {
      const { ada } = yield* publisherAndAda
      const links = yield* EmailLinks
      const signIn = yield* SignIn
      const before = yield* signIn.signIn({ email: "ada@example.com", password: PASSWORD, address: ADDRESS })
      yield* requestReset("ada@example.com")
      yield* sentCount(1)
      const first = yield* lastLink
      yield* requestReset("ada@example.com")
      yield* sentCount(2)
      const second = yield* lastLink
      for (let attempt = 0; attempt < 6; attempt++) yield* signInAs("ada@example.com", `wrong password ${attempt}`, `203.0.113.${attempt}`)
      expect(yield* signInAs("ada@example.com", PASSWORD)).toMatchObject({ left: { _tag: "SignInRefused" } })
      yield* links.setPassword(second, NEW_PASSWORD)
      expect(yield* Effect.flip(links.inspect(first))).toMatchObject({ reason: "used" })
      expect(yield* signIn.current(before.sessionId)).toMatchObject({ _tag: "None" })
      expect(Either.isRight(yield* signInAs("ada@example.com", NEW_PASSWORD))).toBe(true)
      const changed = (yield* eventsOf(ada.uid)).find((event) => event.kind === "password_changed")
      expect(changed?.detail).toMatchObject({ link: "password_reset", actor: { kind: "user", uid: ada.uid } })
    }).pipe(Effect.provide(sso())))

  it.effect("a password changed another way ends the links already sent", () =>
    Effect.gen(function*() {
      const { ada } = yield* publisherAndAda
      yield* requestReset("ada@example.com")
      yield* sentCount(1)
      const token = yield* lastLink
      yield* Effect.flatMap(Directory, (directory) => directory.setPassword(ada.uid, NEW_PASSWORD))
      expect(yield* Effect.flip(Effect.flatMap(EmailLinks, (links) => links.setPassword(token, "the attacker's choice")))).toMatchObject({
        reason: "used"
      })
    }).pipe(Effect.provide(sso())))

  it.effect("resets are limited per email address and per source address, known or not", () =>
    Effect.gen(function*() {
      yield* publisherAndAda
      for (const email of ["ada@example.com", "nobody@example.com"]) {
        for (let request = 0; request < 3; request++) expect(Either.isRight(yield* requestReset(email, `198.51.100.${request}`))).toBe(true)
        expect(yield* requestReset(email, "198.51.100.9")).toMatchObject({ left: { _tag: "ResetThrottled" } })
      }
      for (let request = 0; request < 4; request++) expect(Either.isRight(yield* requestReset(`person${request}@example.com`))).toBe(true)
      expect(yield* requestReset("person9@example.com")).toMatchObject({ left: { _tag: "ResetThrottled", retryAfterSeconds: 300 } })
      yield* TestClock.adjust("5 minutes")
      expect(Either.isRight(yield* requestReset("person9@example.com"))).toBe(true)
      expect(yield* requestReset("not an address")).toMatchObject({ left: { _tag: "InvalidInput", field: "email" } })
    }).pipe(Effect.provide(sso())))

  it.effect("a send the provider may take later is tried again with a new link; a refused one is not", () =>
    Effect.gen(function*() {
      const { failures } = yield* TestMailer
      yield* Ref.set(failures, ["temporary"])
      const links = yield* EmailLinks
      const invited = yield* links.invite({ name: "Grace", email: "grace@example.com" })
      yield* sentCount(1)
      const outcomes = (yield* eventsOf(invited.user.uid))
        .filter((event) => event.kind === "invitation_email")
        .map((event) => event.detail["outcome"])
      expect(outcomes).toEqual(["sent", "failed"])
      yield* links.setPassword(yield* lastLink, NEW_PASSWORD)

      yield* Ref.set(failures, ["permanent"])
      const refused = yield* links.invite({ name: "Alan", email: "alan@example.com" })
      yield* eventuallyEffect(Effect.map(eventsOf(refused.user.uid), (events) => events.some((event) => event.kind === "invitation_email")))
      yield* TestClock.adjust("5 minutes")
      const attempts = (yield* eventsOf(refused.user.uid)).filter((event) => event.kind === "invitation_email")
      expect(attempts.map((event) => event.detail["outcome"])).toEqual(["refused"])
      expect((yield* sentMessages).map((message) => message.to)).toEqual(["grace@example.com"])
    }).pipe(Effect.provide(sso())))

  it.effect("suspended users and API users get no reset email; only administrators invite", () =>
    Effect.gen(function*() {
      const { ada } = yield* publisherAndAda
      const directory = yield* Directory
      yield* directory.suspend(ada.uid, "left")
      yield* directory.createUser({ email: "robot@example.com", name: "Robot", apiUser: true })
      yield* requestReset("ada@example.com")
      yield* requestReset("robot@example.com")
      yield* TestClock.adjust("30 seconds")
      expect(yield* sentMessages).toEqual([])
      const asUser = yield* Effect.flip(
        Effect.flatMap(EmailLinks, (links) => links.invite({ name: "Eve", email: "eve@example.com" })).pipe(
          Effect.provideService(Actor, { kind: "user", uid: ada.uid, email: ada.email })
        )
      )
      expect(asUser).toMatchObject({ _tag: "NotAllowed" })
      expect(Either.isLeft(yield* Effect.either(directory.userByEmail("eve@example.com")))).toBe(true)
    }).pipe(Effect.provide(sso())))

  it.effect("tokens that are not links are refused without a lookup, alike", () =>
    Effect.gen(function*() {
      const links = yield* EmailLinks
      for (const token of ["", "x", "0".repeat(32), "A".repeat(32), "\u0000".repeat(32)]) {
        expect(yield* Effect.flip(links.inspect(token))).toMatchObject({ _tag: "EmailLinkRefused", reason: "unknown" })
      }
    }).pipe(Effect.provide(sso())))
})
