import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Caller } from "@civicstack/kit/access"
import { Effect, Layer, Schema } from "effect"
import type { AlertsCallbacksGroup, AlertsGroup, AlertsHealthGroup } from "../api/AlertsApi"
import { InvalidRequest, refusalOf, StatusUpdatesOff } from "../api/errors"
import type { TooManyAuthTokens } from "../api/errors"
import {
  AuthTokenBody,
  ChangeAddressBody,
  ChangeFrequencyBody,
  CreateNotificationBody,
  CreateSubscriberListBody,
  CreateSubscriptionBody,
  StatusUpdateBody,
  SubscriptionAuthTokenBody
} from "../api/requests"
import { Alerts } from "../services/Alerts"
import {
  listCriteriaFromWire,
  notificationFromWire,
  subscriberListToWire,
  subscriberToWire,
  subscriptionDetailsToWire,
  subscriptionToWire,
  subscriptionWithListToWire
} from "./wire"

const unreadable = (problem: string) => new InvalidRequest({ error: `body: ${problem}`, details: { body: [problem] } })

/**
 * The body decoded here rather than by the router, so that a refusal is the contract's 400 or 422 naming every field
 * (`refusalOf`), and a body that is not JSON is a 400 in the same envelope.
 */
const decodeBody = <A, I>(schema: Schema.Schema<A, I>) => (request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function*() {
    const text = yield* Effect.mapError(request.text, () => unreadable("could not be read"))
    const json = yield* Effect.try({
      try: (): unknown => JSON.parse(text),
      catch: () => unreadable("must be a JSON document")
    })
    return yield* Effect.mapError(Schema.decodeUnknown(schema)(json), refusalOf)
  })

/** 429 with `Retry-After`, which the error's schema cannot carry as a header. */
const tooManyAuthTokens = ({ error, retryAfterSeconds }: TooManyAuthTokens) =>
  Effect.succeed(HttpServerResponse.unsafeJson({ error }, {
    status: 429,
    headers: { "retry-after": String(retryAfterSeconds) }
  }))

const outcome = (created: boolean) => (created ? "created" as const : "found" as const)

/** `POST /status-updates`: the token is checked before the body is read; what the update is about is the service's. */
const statusUpdate = (alerts: Alerts["Type"], request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function*() {
    const access = alerts.statusCallbackAccess(request.headers.authorization)
    if (access === "off") return yield* new StatusUpdatesOff({ error: "Not Found" })
    if (access === "refused") {
      return HttpServerResponse.unsafeJson({ error: "The bearer token is missing or wrong" }, {
        status: 401,
        headers: { "www-authenticate": "Bearer" }
      })
    }
    const update = yield* decodeBody(StatusUpdateBody)(request)
    // only emails are ours; an update without a reference cannot be about one of them
    if (update.reference !== null && (update.notification_type ?? "email") === "email") {
      yield* alerts.recordDeliveryReport({
        emailId: update.reference,
        address: update.to,
        source: "notify",
        providerId: update.id,
        status: update.status,
        detail: null,
        reportedAt: update.completed_at ?? update.sent_at ?? update.created_at ?? null
      })
    }
    return HttpServerResponse.empty({ status: 204 })
  }).pipe(Effect.catchTag("StoreError", Effect.die))

/**
 * The handlers of the email alert endpoints (`AlertsGroup`), its open health check (`AlertsHealthGroup`) and Notify's
 * status callback (`AlertsCallbacksGroup`), for an HttpApi made of those groups under the host's own API identifier
 * (`HttpApi.make("myhost").add(AlertsGroup).add(AlertsHealthGroup).add(AlertsCallbacksGroup)`). Storage and job
 * queue failures are defects here: the host turns them into 503 or 500 answers.
 */
export const alertsHandlers = <ApiId extends string, E, R>(
  api: HttpApi.HttpApi<ApiId, typeof AlertsGroup | typeof AlertsHealthGroup | typeof AlertsCallbacksGroup, E, R>
) =>
  Layer.mergeAll(
    HttpApiBuilder.group(api, "alertsCallbacks", (handlers) =>
      Effect.map(Alerts, (alerts) => handlers.handleRaw("statusUpdate", ({ request }) => statusUpdate(alerts, request)))),
    HttpApiBuilder.group(api, "alerts", (handlers) =>
      Effect.gen(function*() {
        const alerts = yield* Alerts
        const { publicSiteUrl } = alerts
        const queueNotification = ({ request }: { readonly request: HttpServerRequest.HttpServerRequest }) =>
          decodeBody(CreateNotificationBody)(request).pipe(
            Effect.flatMap((body) => alerts.queueNotification(notificationFromWire(body))),
            Effect.as({ message: "Notification queued for sending" as const }),
            Effect.catchTags({ StoreError: Effect.die, JobQueueError: Effect.die })
          )
        return handlers
          .handleRaw("createSubscriberList", ({ request }) =>
            decodeBody(CreateSubscriberListBody)(request).pipe(
              Effect.flatMap((body) => alerts.findOrCreateList({ title: body.title, criteria: listCriteriaFromWire(body) })),
              Effect.map(({ created, value }) => ({
                subscriber_list: subscriberListToWire(value, publicSiteUrl),
                outcome: outcome(created)
              })),
              Effect.catchTag("StoreError", Effect.die)
            ))
          .handle("findSubscriberList", ({ urlParams }) =>
            alerts.listByCriteria(listCriteriaFromWire(urlParams)).pipe(
              Effect.map((list) => ({ subscriber_list: subscriberListToWire(list, publicSiteUrl) })),
              Effect.catchTag("StoreError", Effect.die)
            ))
          .handle("getSubscriberList", ({ path }) =>
            alerts.listBySlug(path.slug).pipe(
              Effect.map((list) => ({ subscriber_list: subscriberListToWire(list, publicSiteUrl) })),
              Effect.catchTag("StoreError", Effect.die)
            ))
          .handleRaw("createNotification", queueNotification)
          .handleRaw("createContentChange", queueNotification)
          .handle("getSubscriberSubscriptions", ({ path }) =>
            alerts.subscriptionsOf(path.id).pipe(
              Effect.map(({ subscriber, subscriptions }) => ({
                subscriber: subscriberToWire(subscriber),
                subscriptions: subscriptions.map(({ list, subscription }) =>
                  subscriptionWithListToWire(subscription, list, publicSiteUrl)
                )
              })),
              Effect.catchTag("StoreError", Effect.die)
            ))
          .handleRaw("changeSubscriberAddress", ({ path, request }) =>
            decodeBody(ChangeAddressBody)(request).pipe(
              Effect.flatMap((body) => alerts.changeAddress(path.id, body.new_address)),
              Effect.map((subscriber) => ({ subscriber: subscriberToWire(subscriber) })),
              Effect.catchTag("StoreError", Effect.die)
            ))
          .handle("deactivateSubscriber", ({ path }) =>
            alerts.deactivateSubscriber(path.id).pipe(Effect.catchTag("StoreError", Effect.die)))
          .handleRaw("createSubscription", ({ request }) =>
            decodeBody(CreateSubscriptionBody)(request).pipe(
              Effect.flatMap((body) =>
                alerts.subscribe({
                  address: body.address,
                  subscriberListId: body.subscriber_list_id,
                  frequency: body.frequency
                })
              ),
              Effect.map(({ created, value }) => ({
                id: value.id,
                subscription: subscriptionToWire(value),
                outcome: outcome(created)
              })),
              Effect.catchTag("StoreError", Effect.die)
            ))
          .handle("getSubscription", ({ path }) =>
            alerts.subscription(path.id).pipe(
              Effect.map((details) => ({ subscription: subscriptionDetailsToWire(details, publicSiteUrl) })),
              Effect.catchTag("StoreError", Effect.die)
            ))
          .handleRaw("changeSubscriptionFrequency", ({ path, request }) =>
            decodeBody(ChangeFrequencyBody)(request).pipe(
              Effect.flatMap((body) => alerts.changeFrequency(path.id, body.frequency)),
              Effect.map((subscription) => ({ subscription: subscriptionToWire(subscription) })),
              Effect.catchTag("StoreError", Effect.die)
            ))
          .handle("unsubscribe", ({ path }) => alerts.unsubscribe(path.id).pipe(Effect.catchTag("StoreError", Effect.die)))
          .handleRaw("sendSubscriptionAuthToken", ({ request }) =>
            Effect.all([decodeBody(SubscriptionAuthTokenBody)(request), Caller]).pipe(
              Effect.flatMap(([body, caller]) =>
                alerts.sendSubscriptionConfirmation({
                  address: body.address,
                  topicId: body.topic_id,
                  frequency: body.frequency,
                  caller: caller.uid
                })
              ),
              Effect.as({}),
              Effect.catchTag("TooManyAuthTokens", tooManyAuthTokens),
              Effect.catchTag("StoreError", Effect.die)
            ))
          .handleRaw("sendAuthToken", ({ request }) =>
            Effect.all([decodeBody(AuthTokenBody)(request), Caller]).pipe(
              Effect.flatMap(([body, caller]) =>
                alerts.sendAuthToken({
                  address: body.address,
                  destination: body.destination,
                  redirect: body.redirect,
                  caller: caller.uid
                })
              ),
              Effect.map((subscriber) => ({ subscriber: subscriberToWire(subscriber) })),
              Effect.catchTag("TooManyAuthTokens", tooManyAuthTokens),
              Effect.catchTag("StoreError", Effect.die)
            ))
      })),
    HttpApiBuilder.group(api, "alertsHealth", (handlers) =>
      Effect.gen(function*() {
        const alerts = yield* Alerts
        return handlers.handle("healthcheck", () =>
          alerts.health.pipe(
            Effect.map(({ delivery, deliveryPausedUntil, queueAge, queueSize, status }) => ({
              checks: {
                queue_size: { status: queueSize },
                queue_age: { status: queueAge },
                delivery: deliveryPausedUntil === null
                  ? { status: delivery }
                  : { status: delivery, paused_until: deliveryPausedUntil.toISOString() }
              },
              status
            })),
            Effect.catchTag("StoreError", Effect.die)
          ))
      }))
  )
