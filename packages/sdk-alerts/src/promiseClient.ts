import type { Frequency, Subscriber, SubscriberList, Subscription, SubscriptionDetails } from "@civicstack/core-alerts/api"
import { fetchHttpClient, promiseRunner } from "@civicstack/kit/sdk"
import { Effect, Layer } from "effect"
import {
  AlertsClient,
  type AlertsClientService,
  type AuthTokenRequest,
  type SubscriptionConfirmationRequest,
  type Healthcheck,
  type FoundOrCreatedList,
  type ListCriteria,
  type NewSubscriberList,
  type NewSubscription,
  type Notification,
  type SubscriberSubscriptions,
  type SubscriptionResult
} from "./AlertsClient"
import { promiseErrorOf } from "./errors"

export interface CreateAlertsClientOptions {
  /** Where the email alert API is served, e.g. `https://alerts.example.org`. */
  readonly baseUrl: string | URL
  /** An API token of the single sign-on whose user has `signin` on `email-alert-api`, sent as a bearer token. */
  readonly bearerToken?: string | undefined
  /** Used instead of the global `fetch` (for proxies, tests, or runtimes that bring their own). */
  readonly fetch?: typeof fetch | undefined
}

/**
 * The email alert API with Promises. A refusal of the service rejects with a subclass of `AlertsApiError` carrying
 * `status`, `error` and `details` (`SubscriberListNotFoundError`, `UnprocessableEntityError`, ...); a service that
 * cannot be reached or answers outside its contract rejects with `AlertsClientError`, which is not an `AlertsApiError`.
 * Each client holds a small Effect runtime: make one per service address and `close()` it when done.
 */
export interface AlertsPromiseClient {
  readonly findOrCreateList: (list: NewSubscriberList) => Promise<FoundOrCreatedList>
  readonly findList: (criteria: ListCriteria) => Promise<SubscriberList>
  readonly getList: (slug: string) => Promise<SubscriberList>
  readonly notify: (notification: Notification) => Promise<void>
  readonly sendContentChange: (notification: Notification) => Promise<void>
  readonly subscriberSubscriptions: (id: number) => Promise<SubscriberSubscriptions>
  readonly changeAddress: (id: number, newAddress: string) => Promise<Subscriber>
  readonly deactivateSubscriber: (id: number) => Promise<void>
  readonly subscribe: (subscription: NewSubscription) => Promise<SubscriptionResult>
  readonly getSubscription: (id: string) => Promise<SubscriptionDetails>
  readonly changeFrequency: (id: string, frequency: Frequency) => Promise<Subscription>
  readonly unsubscribe: (id: string) => Promise<void>
  readonly sendAuthToken: (request: AuthTokenRequest) => Promise<Subscriber>
  readonly sendSubscriptionAuthToken: (request: SubscriptionConfirmationRequest) => Promise<void>
  readonly health: () => Promise<Healthcheck>
  /** Releases the client; calls still running and calls made afterwards reject with an `AbortError` DOMException. */
  readonly close: () => Promise<void>
}

export const createAlertsClient = (options: CreateAlertsClientOptions): AlertsPromiseClient => {
  const runner = promiseRunner(
    AlertsClient.layer({ baseUrl: options.baseUrl, bearerToken: options.bearerToken }).pipe(
      Layer.provide(fetchHttpClient(options.fetch))
    ),
    "email alert client",
    promiseErrorOf
  )
  const run = <A, E>(call: (client: AlertsClientService) => Effect.Effect<A, E>): Promise<A> =>
    runner.run(Effect.flatMap(AlertsClient, call))

  return {
    findOrCreateList: (list) => run((client) => client.findOrCreateList(list)),
    findList: (criteria) => run((client) => client.findList(criteria)),
    getList: (slug) => run((client) => client.getList(slug)),
    notify: (notification) => run((client) => client.notify(notification)),
    sendContentChange: (notification) => run((client) => client.sendContentChange(notification)),
    subscriberSubscriptions: (id) => run((client) => client.subscriberSubscriptions(id)),
    changeAddress: (id, newAddress) => run((client) => client.changeAddress(id, newAddress)),
    deactivateSubscriber: (id) => run((client) => client.deactivateSubscriber(id)),
    subscribe: (subscription) => run((client) => client.subscribe(subscription)),
    getSubscription: (id) => run((client) => client.getSubscription(id)),
    changeFrequency: (id, frequency) => run((client) => client.changeFrequency(id, frequency)),
    unsubscribe: (id) => run((client) => client.unsubscribe(id)),
    sendAuthToken: (request) => run((client) => client.sendAuthToken(request)),
    sendSubscriptionAuthToken: (request) => run((client) => client.sendSubscriptionAuthToken(request)),
    health: () => run((client) => client.health()),
    close: runner.close
  }
}
