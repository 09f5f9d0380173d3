import { Context } from "effect"
import type { Effect } from "effect"
import type { StoreError } from "../storage/AlertsStore"

/** A message that is not the fan-out of a notification or a digest (e.g. the auth-token email). */
export interface SingleEmail {
  readonly address: string
  readonly subject: string
  /** Markdown. */
  readonly body: string
}

export interface QueueFigures {
  /** Emails waiting to be sent (pending or being sent) plus fan-out and digest jobs not yet done. */
  readonly size: number
  /** When the oldest pending email for an immediate subscriber (or a single email) was queued; null when none. */
  readonly oldestImmediatePendingSince: Date | null
}

/**
 * The email side of the service as the request side needs it. Inside a `AlertsStore.transaction` on SQL, `queue`
 * joins that transaction.
 */
export class EmailQueue extends Context.Tag("@civicstack/core-alerts/EmailQueue")<EmailQueue, {
  readonly queue: (email: SingleEmail) => Effect.Effect<void, StoreError>
  readonly figures: Effect.Effect<QueueFigures, StoreError>
}>() {}
