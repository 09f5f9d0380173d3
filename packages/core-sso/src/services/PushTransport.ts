import { makeOutboundClient } from "@civicstack/outbound"
import type { Resolver } from "@civicstack/outbound"
import { Context, Duration, Effect, Layer } from "effect"

/** What became of one push request: the receiver's status, or why no answer came. */
export type PushOutcome =
  | { readonly _tag: "Answered"; readonly status: number }
  | { readonly _tag: "Failed"; readonly reason: string; readonly permanent: boolean }

export interface PushTransportConfig {
  readonly allowPrivateAddresses: boolean
  readonly connectTimeout: Duration.Duration
  readonly responseTimeout: Duration.Duration
  readonly lookup?: Resolver | undefined
}

/** Outbound PUT and POST of pushes, through the private-address guard of `@civicstack/outbound`. */
export class PushTransport extends Context.Tag("@civicstack/core-sso/PushTransport")<PushTransport, {
  readonly send: (request: {
    readonly method: "PUT" | "POST"
    readonly url: string
    readonly body: string
    readonly bearerToken: string
  }) => Effect.Effect<PushOutcome>
}>() {
  static readonly layer = (config: PushTransportConfig) =>
    Layer.scoped(
      PushTransport,
      Effect.gen(function*() {
        const client = yield* makeOutboundClient({
          allowPrivateAddresses: config.allowPrivateAddresses,
          resolve: config.lookup,
          userAgent: "civicstack-sso/0.1",
          connectTimeout: config.connectTimeout,
          responseTimeout: config.responseTimeout,
          totalTimeout: Duration.sum(config.connectTimeout, config.responseTimeout)
        })
        return {
          send: ({ bearerToken, body, method, url }) =>
            client.request(url, {
              method,
              headers: { "content-type": "application/json", authorization: `Bearer ${bearerToken}` },
              body,
              ignoreBody: true
            }).pipe(
              Effect.map(({ status }): PushOutcome => ({ _tag: "Answered", status })),
              Effect.catchAll((failure) =>
                Effect.succeed<PushOutcome>({ _tag: "Failed", reason: failure.message, permanent: failure.permanent })
              )
            )
        }
      })
    )
}
