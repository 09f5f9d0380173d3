import { now } from "@civicstack/kit"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { EmailLinkRefused, InvalidInput, NotAllowed, NotFound } from "../domain/errors"
import { linkRefusedFor } from "../domain/emailLinks"
import { emailLinkDedupeKey, emailLinkJob } from "../domain/jobs"
import type { EmailLink, User } from "../domain/records"
import { hashSecret, isSecretShaped } from "../domain/secrets"
import { emailProblem } from "../domain/userInput"
import type { AlreadyTaken } from "../storage/SsoStore"
import { StoreError } from "../storage/SsoStore"
import { Actor, actorDetail } from "./Actor"
import { Directory } from "./Directory"
import type { UserDetails } from "./Directory"
import { SsoParts } from "./SsoParts"
import { makeThrottle } from "./throttle"

/** Too many password resets were asked for from this address, or for this email address, within the window. */
export class ResetThrottled extends Schema.TaggedError<ResetThrottled>()("ResetThrottled", {
  retryAfterSeconds: Schema.Number
}) {}

/** An emailed link that works: whose it is and what it is for. */
export interface UsableLink {
  readonly link: EmailLink
  readonly user: User
}

/**
 * Invitations and password resets by email. The emails leave through the host's `Mailer` from the `workers`, each
 * with a one-time link of which only a hash is kept: an invitation's works 7 days, a reset's 2 hours.
 */
export class EmailLinks extends Context.Tag("@civicstack/core-sso/EmailLinks")<EmailLinks, {
  /** Creates a user without a password (through the `Directory`, as its actor) and emails them an invitation. */
  readonly invite: (input: { readonly name: string; readonly email: string }) => Effect.Effect<
    UserDetails,
    StoreError | AlreadyTaken | InvalidInput | NotFound | NotAllowed
  >
  /** Emails the invitation again to a user who has not chosen a password yet. */
  readonly resendInvitation: (uid: string) => Effect.Effect<void, StoreError | InvalidInput | NotFound | NotAllowed>
  /**
   * Emails a password reset link to the user of `email`, if there is one: whether there is is not told, and the same
   * work is done either way. Throttled per address and per email address.
   */
  readonly requestPasswordReset: (request: { readonly email: string; readonly address: string }) => Effect.Effect<
    void,
    StoreError | InvalidInput | ResetThrottled
  >
  /** The link a token opens, or why it cannot be used. */
  readonly inspect: (token: string) => Effect.Effect<UsableLink, StoreError | EmailLinkRefused>
  /** Sets the password of the link's user and uses the link: it works once, and ends the user's other links. */
  readonly setPassword: (token: string, password: string) => Effect.Effect<
    UsableLink,
    StoreError | EmailLinkRefused | InvalidInput | AlreadyTaken | NotFound | NotAllowed
  >
}>() {
  static readonly layer = Layer.effect(
    EmailLinks,
    Effect.gen(function*() {
      const parts = yield* SsoParts
      const { jobs, settings, store } = parts
      const directory = yield* Directory
      const throttle = makeThrottle(store, settings.emailLinks.window)

      const enqueue = (payload: typeof emailLinkJob.payload.Type) =>
        jobs.enqueue(emailLinkJob, payload, { dedupeKey: emailLinkDedupeKey(payload) }).pipe(
          Effect.asVoid,
          Effect.catchTag("JobQueueError", (cause) => new StoreError({ message: "sso: queueing an email failed", cause }))
        )

      const recordInvitation = (uid: string) =>
        Effect.gen(function*() {
          const actor = actorDetail(yield* Actor)
          yield* store.appendEvent({ at: yield* now, kind: "invitation_queued", userUid: uid, applicationId: null, detail: { actor } })
        })

      const inspect = (token: string) =>
        Effect.gen(function*() {
          const link = isSecretShaped(token) ? yield* store.emailLinkByHash(hashSecret(token)) : Option.none()
          if (Option.isNone(link)) return yield* new EmailLinkRefused({ reason: "unknown" })
          if (link.value.usedAt !== null) return yield* new EmailLinkRefused({ reason: "used" })
          if (link.value.expiresAt.getTime() <= (yield* now).getTime()) return yield* new EmailLinkRefused({ reason: "expired" })
          const user = yield* store.userByUid(link.value.userUid)
          if (Option.isNone(user) || linkRefusedFor(link.value.purpose, user.value) !== undefined) {
            return yield* new EmailLinkRefused({ reason: "unknown" })
          }
          return { link: link.value, user: user.value }
        })

      return {
        invite: ({ email, name }) =>
          Effect.gen(function*() {
            yield* Effect.flatMap(Actor, (actor) =>
              actor.kind === "user" ? new NotAllowed({ reason: "Only administrators invite users" }) : Effect.void)
            return yield* store.atomically(Effect.gen(function*() {
              const created = yield* directory.createUser({ name, email })
              yield* enqueue({ purpose: "invitation", userUid: created.user.uid })
              yield* recordInvitation(created.user.uid)
              return created
            }))
          }),
        resendInvitation: (uid) =>
          Effect.gen(function*() {
            yield* directory.mayManage(uid)
            const { user } = yield* directory.user(uid)
            const refused = linkRefusedFor("invitation", user)
            if (refused !== undefined) return yield* new InvalidInput({ field: "user", problem: `cannot be invited: ${refused}` })
            yield* store.atomically(Effect.zipRight(enqueue({ purpose: "invitation", userUid: uid }), recordInvitation(uid)))
          }),
        requestPasswordReset: ({ address, email }) =>
          Effect.gen(function*() {
            const wanted = email.trim()
            const problem = emailProblem(wanted)
            if (problem !== undefined) return yield* new InvalidInput({ field: "email", problem })
            const rules = [
              { key: `reset:address:${address}`, limit: settings.emailLinks.resetsPerAddress },
              { key: `reset:email:${wanted.toLowerCase()}`, limit: settings.emailLinks.resetsPerEmail }
            ]
            const at = yield* now
            const retryAfterSeconds = yield* throttle.retryAfter(rules, at)
            if (retryAfterSeconds !== undefined) return yield* new ResetThrottled({ retryAfterSeconds })
            yield* store.atomically(Effect.zipRight(
              throttle.recordFailure(rules, at),
              enqueue({ purpose: "password_reset", email: wanted })
            ))
          }),
        inspect,
        setPassword: (token, password) =>
          Effect.gen(function*() {
            const usable = yield* inspect(token)
            const { email, uid } = usable.user
            yield* directory.setPassword(uid, password, { usingLink: usable.link }).pipe(
              Effect.provideService(Actor, { kind: "user", uid, email })
            )
            return usable
          })
      }
    })
  )
}
