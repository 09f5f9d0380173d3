import { makeOutboundClient } from "@civicstack/outbound"
import type { Resolver } from "@civicstack/outbound"
import { Context, Duration, Effect, Layer, Schema } from "effect"

export class WebhookTransportError extends Schema.TaggedError<WebhookTransportError>()("WebhookTransportError", {
  message: Schema.String,
  /** No later attempt can succeed: the address is refused or the URL cannot be used. */
  permanent: Schema.optionalWith(Schema.Boolean, { default: () => false })
}) {}

export interface WebhookTransportConfig {
  readonly allowPrivateAddresses: boolean
  readonly userAgent: string
  /** Connect plus response time allowed to the receiver. */
  readonly timeout: Duration.DurationInput
  readonly lookup?: Resolver | undefined
}

/** Outbound POST of a webhook body, through the private-address guard of `@civicstack/outbound`. */
export class WebhookTransport extends Context.Tag("@civicstack/core-linkcheck/WebhookTransport")<WebhookTransport, {
  readonly post: (
    uri: string,
    body: string,
    headers: Readonly<Record<string, string>>
  ) => Effect.Effect<{ readonly status: number }, WebhookTransportError>
}>() {
  /** POSTs webhooks over pooled connections, to public addresses only unless private ones are allowed. */
  static readonly layer = (config: Partial<WebhookTransportConfig> = {}): Layer.Layer<WebhookTransport> =>
    Layer.scoped(
      WebhookTransport,
      Effect.gen(function*() {
        const timeout = config.timeout ?? Duration.seconds(10)
        const client = yield* makeOutboundClient({
          allowPrivateAddresses: config.allowPrivateAddresses ?? false,
          resolve: config.lookup,
          userAgent: config.userAgent ?? "civicstack-linkcheck/0.1",
          connectTimeout: timeout,
          responseTimeout: timeout,
          totalTimeout: timeout
        })
        return {
          post: (uri, body, headers) =>
            client.request(uri, { method: "POST", headers, body, ignoreBody: true }).pipe(
              Effect.map(({ status }) => ({ status })),
              Effect.mapError((failure) =>
                new WebhookTransportError({ message: failure.message, permanent: failure.permanent })
              )
            )
        }
      })
    )
}
