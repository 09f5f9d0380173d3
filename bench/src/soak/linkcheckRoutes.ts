import { Deferred, Effect } from "effect"
import type { ArrivedWebhook, Receiver } from "../linkcheck/receiver"
import type { RouteLoad } from "./routeLoad"

/**
 * A stored check younger than this is reused by `GET /check`, so the lookups over the fleet's pages both read stored
 * reports and, as each one ages, queue a new check.
 */
const CHECK_REUSE_SECONDS = 60

/** `GET /check?uri=` over the fleet's links in turn. */
export const checks = (token: string, uris: ReadonlyArray<string>, connections: number): RouteLoad<void> => {
  let sent = 0
  const headers = { authorization: `Bearer ${token}` }
  return {
    route: "checks",
    connections,
    next: () => {
      const uri = uris[sent % uris.length]!
      sent += 1
      const query = new URLSearchParams({ uri, checked_within: String(CHECK_REUSE_SECONDS) })
      return { request: { method: "GET", path: `/check?${query}`, headers }, tag: undefined }
    }
  }
}

export interface BatchLoad extends RouteLoad<Deferred.Deferred<ArrivedWebhook>> {
  /** Batches the server accepted, and how many of their webhooks have reached the receiver so far. */
  readonly webhooks: () => { readonly accepted: number; readonly arrived: number }
}

/**
 * `POST /batch` at `rate` a second of `linksPerBatch` consecutive fleet links (checked again: `checked_within` 0),
 * each with a signed webhook to a path of its own on the receiver.
 */
export const batches = (
  token: string,
  uris: ReadonlyArray<string>,
  receiver: Receiver,
  options: { readonly run: string; readonly connections: number; readonly rate: number; readonly linksPerBatch: number }
): BatchLoad => {
  let sent = 0
  const accepted: Array<Deferred.Deferred<ArrivedWebhook>> = []
  return {
    route: "batches",
    connections: options.connections,
    rate: options.rate,
    next: () => {
      const first = (sent * options.linksPerBatch) % uris.length
      sent += 1
      const batchUris = Array.from({ length: options.linksPerBatch }, (_, index) => uris[(first + index) % uris.length]!)
      const webhook = Effect.runSync(receiver.expectWebhook(`soak-${options.run}-${sent}`))
      return {
        request: {
          method: "POST",
          path: "/batch",
          headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
          body: JSON.stringify({
            uris: batchUris,
            checked_within: 0,
            priority: "high",
            webhook_uri: webhook.url,
            webhook_secret_token: `soak-secret-${sent}`
          })
        },
        tag: webhook.arrival
      }
    },
    answered: (status, _body, arrival) => {
      if (status >= 200 && status < 300) accepted.push(arrival)
    },
    webhooks: () => ({
      accepted: accepted.length,
      arrived: accepted.filter((arrival) => Effect.runSync(Deferred.isDone(arrival))).length
    })
  }
}
