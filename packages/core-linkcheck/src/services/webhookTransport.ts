import { Duration, Effect, Layer } from "effect"
import { Agent, request } from "undici"
import { isNonPublicAddress } from "../domain/privateAddress"
import { makeGuardedLookup, systemResolver } from "./checker/guardedLookup"
import type { Resolver } from "./checker/guardedLookup"
import { WebhookTransport, WebhookTransportError } from "./WebhookSender"

export interface WebhookTransportConfig {
  readonly allowPrivateAddresses: boolean
  readonly userAgent: string
  /** Connect plus response time allowed to the receiver. */
  readonly timeout: Duration.DurationInput
  readonly lookup?: Resolver
}

const hostnameOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, "")

/** POSTs webhooks over pooled connections, through the same private-address guard as link checks. */
export const webhookTransportLayer = (config: Partial<WebhookTransportConfig> = {}) =>
  Layer.scoped(
    WebhookTransport,
    Effect.gen(function*() {
      const allowPrivateAddresses = config.allowPrivateAddresses ?? false
      const timeout = Duration.toMillis(config.timeout ?? Duration.seconds(10))
      const agent = yield* Effect.acquireRelease(
        Effect.sync(() =>
          new Agent({
            connect: {
              timeout,
              lookup: makeGuardedLookup(config.lookup ?? systemResolver, allowPrivateAddresses)
            },
            headersTimeout: timeout,
            bodyTimeout: timeout
          })
        ),
        (agent) => Effect.promise(() => agent.close())
      )
      const userAgent = config.userAgent ?? "civicstack-linkcheck/0.1"

      return {
        post: (uri, body, headers) =>
          Effect.tryPromise({
            try: async (signal) => {
              const url = new URL(uri)
              if (!allowPrivateAddresses && isNonPublicAddress(hostnameOf(url))) {
                throw new Error(`${url.hostname} is a non-public address`)
              }
              const response = await request(url, {
                method: "POST",
                body,
                headers: { ...headers, "user-agent": userAgent },
                dispatcher: agent,
                signal
              })
              await response.body.dump()
              return { status: response.statusCode }
            },
            catch: (error) =>
              new WebhookTransportError({ message: error instanceof Error ? error.message : String(error) })
          })
      }
    })
  )
