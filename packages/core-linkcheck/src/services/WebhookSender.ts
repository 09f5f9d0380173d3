import { Context, Schema } from "effect"
import type { Effect } from "effect"

export class WebhookTransportError extends Schema.TaggedError<WebhookTransportError>()("WebhookTransportError", {
  message: Schema.String,
  /** No later attempt can succeed: the address is refused or the URL cannot be used. */
  permanent: Schema.optionalWith(Schema.Boolean, { default: () => false })
}) {}

/** Outbound POST of a webhook body; the live one goes through the private-address guard of link checks. */
export class WebhookTransport extends Context.Tag("@civicstack/core-linkcheck/WebhookTransport")<WebhookTransport, {
  readonly post: (
    uri: string,
    body: string,
    headers: Readonly<Record<string, string>>
  ) => Effect.Effect<{ readonly status: number }, WebhookTransportError>
}>() {}
