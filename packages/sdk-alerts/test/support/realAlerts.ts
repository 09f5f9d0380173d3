import { alertsHandlers, AlertsOperations, defaultAlertsSettings, layerMemory } from "@civicstack/core-alerts"
import {
  ALERTS_APPLICATION,
  AlertsAccess,
  AlertsCallbacksGroup,
  AlertsGroup,
  AlertsHealthGroup,
  AuthTokenBody,
  CreateNotificationBody,
  decodeSubscriberListQuery,
  SubscriptionAuthTokenBody
} from "@civicstack/core-alerts/api"
import { fakeTokenAccess, invalidRequestsRefused, servedOnLoopback } from "@civicstack/kit/testing"
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Effect, Either, Exit, Layer, Redacted, Schema } from "effect"

export { baseUrl as serverUrl, FAKE_TOKEN, FORBIDDEN_TOKEN } from "@civicstack/kit/testing"

export const PUBLIC_SITE_URL = "https://www.example.org"

/** The health check warns from this many queued notifications on (no workers run, so they stay queued). */
export const QUEUE_WARNING_SIZE = 3

/** A request that reached the service, and whether it was answered with success. */
interface Arrived {
  readonly method: string
  readonly path: string
  readonly query: URLSearchParams
  readonly text: string
  readonly accepted: boolean
}

/**
 * What the service received over HTTP, read back as the contract decodes it (wire names, dates as dates): the list
 * queries it read, and the notifications, auth tokens and confirmations it accepted.
 */
export class Received extends Effect.Service<Received>()("test/Received", {
  effect: Effect.gen(function*() {
    const operations = yield* AlertsOperations
    const requests: Array<Arrived> = []
    const at = (method: string, ...paths: ReadonlyArray<string>) =>
      requests.filter((request) => request.method === method && paths.includes(request.path))
    const acceptedBodies = <A, I>(path: string, schema: Schema.Schema<A, I>) =>
      Effect.sync(() =>
        at("POST", path).filter((request) => request.accepted).map((request) =>
          Schema.decodeUnknownSync(Schema.parseJson(schema))(request.text)
        )
      )
    return {
      record: (request: Arrived) => Effect.sync(() => requests.push(request)),
      /** In the order they came, on either path. */
      notifications: Effect.sync(() =>
        at("POST", "/notifications", "/content-changes").filter((request) => request.accepted).map(({ path, text }) => ({
          path,
          body: Schema.decodeUnknownSync(Schema.parseJson(CreateNotificationBody))(text)
        }))
      ),
      /** Every query of `GET /subscriber-lists` it was sent that can be read, whatever the answer. */
      listQueries: Effect.sync(() =>
        at("GET", "/subscriber-lists").flatMap((request) =>
          Either.match(decodeSubscriberListQuery(request.query), { onLeft: () => [], onRight: (query) => [query] })
        )
      ),
      /** Auth tokens sent: to which subscriber (the one with the address, as the service finds it), for where. */
      authTokens: Effect.flatMap(acceptedBodies("/subscribers/auth-token", AuthTokenBody), (bodies) =>
        Effect.forEach(bodies, ({ address, destination, redirect }) =>
          Effect.map(operations.subscriberByAddress(address), ({ subscriber }) => ({
            subscriberId: subscriber.id,
            destination,
            redirect: redirect ?? null
          })).pipe(Effect.orDie))),
      subscriptionConfirmations: acceptedBodies("/subscriptions/auth-token", SubscriptionAuthTokenBody)
    }
  })
}) {}

/** Keeps each request that reaches the service; the service answers as it would without it. */
const recorded = HttpApiBuilder.middleware(Effect.map(Received, (received) => (app) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    Effect.onExit(app, (exit) =>
      Effect.gen(function*() {
        const url = new URL(request.url, "http://127.0.0.1")
        yield* received.record({
          method: request.method,
          path: url.pathname.replace(/(.)\/+$/, "$1"),
          query: url.searchParams,
          text: request.method === "GET" ? "" : yield* Effect.orElseSucceed(request.text, () => ""),
          accepted: Exit.isSuccess(exit) && exit.value.status < 300
        })
      })))))

const api = HttpApi.make("sdk-alerts-test").add(AlertsGroup).add(AlertsHealthGroup).add(AlertsCallbacksGroup)

/**
 * The real email alert service (core-alerts in memory, its HTTP handlers) on 127.0.0.1 at a free port, without
 * workers, behind a test access check: `FAKE_TOKEN` is a caller with `signin`, `FORBIDDEN_TOKEN` one without (403),
 * any other token or none is refused (401). `Alerts`, `AlertsOperations` and `Received` stay visible to the test.
 */
export const RealAlertsServer = servedOnLoopback(
  HttpApiBuilder.api(api).pipe(
    Layer.provide(alertsHandlers(api)),
    Layer.provide(recorded),
    Layer.provide(invalidRequestsRefused),
    Layer.provide(fakeTokenAccess(AlertsAccess, ALERTS_APPLICATION))
  ),
  Received.Default.pipe(Layer.provideMerge(layerMemory({
    publicSiteUrl: PUBLIC_SITE_URL,
    authTokenSecret: Redacted.make("a test secret that is long enough for HS256 0123456789"),
    healthThresholds: {
      queueSize: { warning: QUEUE_WARNING_SIZE, critical: 1_000_000 },
      queueAge: defaultAlertsSettings.healthThresholds.queueAge
    }
  })))
)
