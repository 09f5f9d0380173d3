import { Context, Effect, Layer, Ref, Schema } from "effect"

/** One email from the sign-on. The body is Markdown, which the host's email provider renders as it needs. */
export interface MailMessage {
  /** Unique per message: providers that take a reference pass it on. */
  readonly id: string
  readonly to: string
  readonly subject: string
  readonly body: string
}

/** The message did not leave; `permanent` when trying again cannot help (the address is refused). */
export class MailNotSent extends Schema.TaggedError<MailNotSent>()("MailNotSent", {
  reason: Schema.String,
  permanent: Schema.Boolean
}) {}

/**
 * Where the sign-on's emails leave (invitations and password resets). The host provides it: the reference server
 * from its `EMAIL_PROVIDER` settings, shared with the email alerts.
 */
export class Mailer extends Context.Tag("@civicstack/core-sso/Mailer")<Mailer, {
  readonly send: (message: MailMessage) => Effect.Effect<void, MailNotSent>
}>() {}

/** A mailer that keeps what it is given, for tests and scripts; `sent` reads it, oldest first. */
export class MemoryOutbox extends Context.Tag("@civicstack/core-sso/MemoryOutbox")<MemoryOutbox, {
  readonly sent: Effect.Effect<ReadonlyArray<MailMessage>>
}>() {
  static readonly layer: Layer.Layer<Mailer | MemoryOutbox> = Layer.effectContext(Effect.gen(function*() {
    const sent = yield* Ref.make<ReadonlyArray<MailMessage>>([])
    return Context.make(Mailer, { send: (message) => Ref.update(sent, (all) => [...all, message]) }).pipe(
      Context.add(MemoryOutbox, { sent: Ref.get(sent) })
    )
  }))
}
