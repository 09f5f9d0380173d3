import { Context, Schema } from "effect"
import type { Effect } from "effect"

/** One message as a provider sends it. The body is Markdown; each provider renders what it needs from it. */
export interface OutgoingEmail {
  /** The email row's id: providers that accept a reference pass it on, so a resent message can be recognised. */
  readonly id: string
  readonly address: string
  readonly subject: string
  readonly body: string
  /** One-click unsubscribe (RFC 8058) for messages about a single subscription; absent otherwise. */
  readonly unsubscribeUrl?: string
}

/** Worth trying again later: the provider was busy (429), failed (5xx) or did not answer in time. */
export class TemporaryDeliveryFailure extends Schema.TaggedError<TemporaryDeliveryFailure>()(
  "TemporaryDeliveryFailure",
  {
    reason: Schema.String,
    /** What the provider asked for (Retry-After), when it said. */
    retryAfterMillis: Schema.optional(Schema.Number),
    /**
     * The provider refuses to send for the service at all (relaying, authentication, the sender's policy), not this
     * email: delivery pauses rather than using up every email's attempts.
     */
    senderRefused: Schema.optional(Schema.Boolean)
  }
) {}

/**
 * Will never succeed: the provider refuses the address (it does not exist, or is refused for good) or this message
 * (a template it does not know, a body it will not take). Only a refused address ends its subscriptions.
 */
export class PermanentDeliveryFailure extends Schema.TaggedError<PermanentDeliveryFailure>()(
  "PermanentDeliveryFailure",
  { reason: Schema.String, addressRejected: Schema.Boolean }
) {}

export type DeliveryFailure = TemporaryDeliveryFailure | PermanentDeliveryFailure

/** Where emails leave the service: the `log`, `smtp` and `notify` adapters, or one an embedder writes. */
export class EmailProvider extends Context.Tag("@civicstack/core-alerts/EmailProvider")<EmailProvider, {
  readonly name: string
  readonly send: (email: OutgoingEmail) => Effect.Effect<void, DeliveryFailure>
}>() {}
