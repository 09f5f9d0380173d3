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
    retryAfterMillis: Schema.optional(Schema.Number)
  }
) {}

/** Will never succeed for this address (it does not exist, or the provider refuses it for good). */
export class PermanentDeliveryFailure extends Schema.TaggedError<PermanentDeliveryFailure>()(
  "PermanentDeliveryFailure",
  { reason: Schema.String }
) {}

export type DeliveryFailure = TemporaryDeliveryFailure | PermanentDeliveryFailure

/** Where emails leave the service: the `log`, `smtp` and `notify` adapters, or one an embedder writes. */
export class EmailProvider extends Context.Tag("@civicstack/core-alerts/EmailProvider")<EmailProvider, {
  readonly name: string
  readonly send: (email: OutgoingEmail) => Effect.Effect<void, DeliveryFailure>
}>() {}
