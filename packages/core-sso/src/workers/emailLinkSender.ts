import { now } from "@civicstack/kit"
import { runWorker } from "@civicstack/jobs"
import type { WorkerOptions } from "@civicstack/jobs"
import { Duration, Effect, Option, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { emailLinkMessage, linkRefusedFor } from "../domain/emailLinks"
import { emailLinkJob } from "../domain/jobs"
import type { EmailLink, User } from "../domain/records"
import { hashSecret, newSecret } from "../domain/secrets"
import { Mailer } from "../services/Mailer"
import { SsoParts } from "../services/SsoParts"

export class EmailNotDelivered extends Schema.TaggedError<EmailNotDelivered>()("EmailNotDelivered", {
  reason: Schema.String
}) {}

const recipientOf = (payload: typeof emailLinkJob.payload.Type) =>
  Effect.flatMap(SsoParts, ({ store }) =>
    payload.purpose === "invitation" ? store.userByUid(payload.userUid) : store.userByEmail(payload.email))

/**
 * Makes the link and sends its email. Nothing is sent to an address no user has, nor to a user who may not have the
 * link; a failure the provider may get over is tried again later, with a new link.
 */
export const deliverEmailLink = (payload: typeof emailLinkJob.payload.Type) =>
  Effect.gen(function*() {
    const { settings, store } = yield* SsoParts
    const mailer = yield* Mailer
    const recipient: Option.Option<User> = yield* recipientOf(payload)
    if (Option.isNone(recipient)) return
    const user = recipient.value
    const refused = linkRefusedFor(payload.purpose, user)
    if (refused !== undefined) {
      return yield* Effect.logInfo("Sign-on email not sent").pipe(
        Effect.annotateLogs({ purpose: payload.purpose, user: user.uid, reason: refused })
      )
    }
    const at = yield* now
    const lifetime = payload.purpose === "invitation"
      ? settings.emailLinks.invitationLifetime
      : settings.emailLinks.passwordResetLifetime
    const token = newSecret()
    const link: EmailLink = {
      id: randomUUID(),
      userUid: user.uid,
      purpose: payload.purpose,
      tokenHash: hashSecret(token),
      createdAt: at,
      expiresAt: new Date(at.getTime() + Duration.toMillis(lifetime)),
      usedAt: null
    }
    yield* store.insertEmailLink(link)
    const url = `${settings.issuer}/users/password/edit?${new URLSearchParams({ token })}`
    const message = emailLinkMessage(payload.purpose, url, lifetime, new URL(settings.issuer).host)
    const sent = yield* Effect.either(mailer.send({ id: link.id, to: user.email, ...message }))
    const outcome = sent._tag === "Right" ? "sent" : sent.left.permanent ? "refused" : "failed"
    yield* store.appendEvent({
      at,
      kind: payload.purpose === "invitation" ? "invitation_email" : "password_reset_email",
      userUid: user.uid,
      applicationId: null,
      detail: {
        outcome,
        link_id: link.id,
        expires_at: link.expiresAt.toISOString(),
        ...(sent._tag === "Left" ? { error: sent.left.reason } : {}),
        actor: { kind: "system" }
      }
    })
    if (sent._tag === "Right") return
    // the link never left: it must not outlive the email it was made for
    yield* store.useEmailLink(link.id, at)
    if (sent.left.permanent) {
      return yield* Effect.logWarning("Sign-on email refused by the provider; not retried").pipe(
        Effect.annotateLogs({ purpose: payload.purpose, user: user.uid, reason: sent.left.reason })
      )
    }
    return yield* new EmailNotDelivered({ reason: sent.left.reason })
  })

export const runEmailLinkWorker = (options?: WorkerOptions) => runWorker(emailLinkJob, deliverEmailLink, options)
