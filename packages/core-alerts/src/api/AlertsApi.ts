import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import type { HttpMethod } from "@effect/platform/HttpMethod"
import * as OpenApi from "@effect/platform/OpenApi"
import { json, jsonWithOutcome } from "@civicstack/kit/access"
import { Schema } from "effect"
import { AlertsAccess } from "./access"
import {
  ContentChangeAlreadyReceivedResponse,
  InvalidRequestResponse,
  StatusUpdateRefusedResponse,
  StatusUpdatesOffResponse,
  SubscriberListNotFoundResponse,
  SubscriberNotFoundResponse,
  TooManyAuthTokensResponse,
  SubscriptionNotFoundResponse,
  UnprocessableEntityResponse
} from "./errors"
import type {
  ContentChangeAlreadyReceived,
  InvalidRequest,
  SubscriberListNotFound,
  SubscriberNotFound,
  SubscriptionNotFound,
  UnprocessableEntity
} from "./errors"
import {
  AuthTokenBody,
  ChangeAddressBody,
  ChangeFrequencyBody,
  ConfirmationQueued,
  CreateNotificationBody,
  CreateSubscriberListBody,
  CreateSubscriptionBody,
  Healthcheck,
  NotificationQueued,
  StatusUpdateBody,
  SubscriberListResponse,
  SubscriberResponse,
  SubscriberSubscriptionsResponse,
  SubscriptionCreatedResponse,
  SubscriptionDetailsResponse,
  SubscriptionAuthTokenBody,
  SubscriptionResponse
} from "./requests"
import { SubscriberListQueryParams } from "./subscriberListQuery"

/**
 * The errors the endpoints declare. Also gives declaration files a local name for each, which bundled SDK
 * declarations need.
 */
export type AlertsError =
  | InvalidRequest
  | UnprocessableEntity
  | SubscriberListNotFound
  | SubscriberNotFound
  | SubscriptionNotFound
  | ContentChangeAlreadyReceived


/** Answers that have one body but two statuses: 201 when created, 200 when it existed. */
const createdOrFound = <A extends object, I>(schema: Schema.Schema<A, I>) => ({
  created: jsonWithOutcome(schema, "created"),
  found: jsonWithOutcome(schema, "found")
})

export const SubscriberListAnswers = createdOrFound(SubscriberListResponse)
export const SubscriptionAnswers = createdOrFound(SubscriptionCreatedResponse)

const SubscriberId = Schema.Struct({
  id: Schema.NumberFromString.pipe(Schema.int(), Schema.positive())
})
const SubscriptionId = Schema.Struct({ id: Schema.String })

/** Endpoints on one record, named by the `:id` in their path: an unknown id answers 404. */
const endpointsOnOne = <Id extends Schema.Schema.Any, NotFound extends Schema.Schema.Any>(
  id: Id & HttpApiEndpoint.HttpApiEndpoint.ValidatePath<Id>,
  notFound: NotFound
) =>
  <const Method extends HttpMethod, const Name extends string>(
    method: Method,
    name: Name,
    path: `/${string}:id${string}`
  ) => HttpApiEndpoint.make(method)(name, path).setPath(id).addError(notFound)

const subscriberEndpoint = endpointsOnOne(SubscriberId, SubscriberNotFoundResponse)
const subscriptionEndpoint = endpointsOnOne(SubscriptionId, SubscriptionNotFoundResponse)

/** A lookup of one subscriber list, by its criteria or its slug: 404 when there is none. */
const subscriberListLookup = <const Name extends string>(
  name: Name,
  path: "/subscriber-lists" | "/subscriber-lists/:slug"
) =>
  HttpApiEndpoint.get(name, path).addSuccess(json(SubscriberListResponse)).addError(SubscriberListNotFoundResponse)

const notificationEndpoint = <const Name extends string, const Path extends `/${string}`>(name: Name, path: Path) =>
  HttpApiEndpoint.post(name, path)
    .setPayload(CreateNotificationBody)
    .addSuccess(json(NotificationQueued), { status: 202 })
    .addError(ContentChangeAlreadyReceivedResponse)

/**
 * The email alert API (the 2018 contract of GOV.UK's email-alert-api, with `/content-changes` and
 * `subscriber_list_id` accepted as later clients send them). A refused value answers 422 naming the field; a missing
 * required field or a body that is not JSON answers 400.
 */
export class AlertsGroup extends HttpApiGroup.make("alerts")
  .add(
    HttpApiEndpoint.post("createSubscriberList", "/subscriber-lists")
      .setPayload(CreateSubscriberListBody)
      .addSuccess(SubscriberListAnswers.created, { status: 201 })
      .addSuccess(SubscriberListAnswers.found, { status: 200 })
  )
  .add(
    subscriberListLookup("findSubscriberList", "/subscriber-lists")
      .setUrlParams(SubscriberListQueryParams)
      .annotate(
        OpenApi.Description,
        "tags[name][]=value, tags[name][any][]=value or tags[name][all][]=value (links the same), document_type, " +
          "email_document_supertype, government_document_supertype, content_id: the list with exactly these criteria"
      )
  )
  .add(
    subscriberListLookup("getSubscriberList", "/subscriber-lists/:slug")
      .setPath(Schema.Struct({ slug: Schema.String }))
  )
  .add(notificationEndpoint("createNotification", "/notifications"))
  .add(notificationEndpoint("createContentChange", "/content-changes"))
  .add(
    subscriberEndpoint("GET", "getSubscriberSubscriptions", "/subscribers/:id/subscriptions")
      .addSuccess(json(SubscriberSubscriptionsResponse))
  )
  .add(
    subscriberEndpoint("PATCH", "changeSubscriberAddress", "/subscribers/:id")
      .setPayload(ChangeAddressBody)
      .addSuccess(json(SubscriberResponse))
  )
  .add(subscriberEndpoint("DELETE", "deactivateSubscriber", "/subscribers/:id").addSuccess(HttpApiSchema.NoContent))
  .add(
    HttpApiEndpoint.post("createSubscription", "/subscriptions")
      .setPayload(CreateSubscriptionBody)
      .addSuccess(SubscriptionAnswers.created, { status: 201 })
      .addSuccess(SubscriptionAnswers.found, { status: 200 })
      .addError(SubscriberListNotFoundResponse)
  )
  .add(
    subscriptionEndpoint("GET", "getSubscription", "/subscriptions/:id")
      .addSuccess(json(SubscriptionDetailsResponse))
  )
  .add(
    subscriptionEndpoint("PATCH", "changeSubscriptionFrequency", "/subscriptions/:id")
      .setPayload(ChangeFrequencyBody)
      .addSuccess(json(SubscriptionResponse))
  )
  .add(subscriptionEndpoint("POST", "unsubscribe", "/unsubscribe/:id").addSuccess(HttpApiSchema.NoContent))
  .add(
    HttpApiEndpoint.post("sendSubscriptionAuthToken", "/subscriptions/auth-token")
      .setPayload(SubscriptionAuthTokenBody)
      .addSuccess(json(ConfirmationQueued), { status: 200 })
      .addError(SubscriberListNotFoundResponse)
      .addError(TooManyAuthTokensResponse)
      .annotate(
        OpenApi.Description,
        "Emails the address a link to PUBLIC_SITE_URL/email/subscriptions/authenticate?token=<JWT>, the JWT's data " +
          "holding address, topic_id (the list's slug) and frequency. Nothing is stored: the site calls " +
          "POST /subscriptions once the token comes back."
      )
  )
  .add(
    HttpApiEndpoint.post("sendAuthToken", "/subscribers/auth-token")
      .setPayload(AuthTokenBody)
      .addSuccess(json(SubscriberResponse), { status: 201 })
      .addError(SubscriberNotFoundResponse)
      .addError(TooManyAuthTokensResponse)
  )
  .addError(InvalidRequestResponse)
  .addError(UnprocessableEntityResponse)
  .middleware(AlertsAccess)
{}

/**
 * Delivery status callbacks from GOV.UK Notify: not behind the sign-on, but behind the bearer token set for them
 * (`NOTIFY_CALLBACK_BEARER_TOKEN`); off (404) without one.
 */
export class AlertsCallbacksGroup extends HttpApiGroup.make("alertsCallbacks")
  .add(
    HttpApiEndpoint.post("statusUpdate", "/status-updates")
      .setPayload(StatusUpdateBody)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(StatusUpdatesOffResponse)
      .addError(StatusUpdateRefusedResponse)
      .annotate(
        OpenApi.Description,
        "Notify's delivery status callback. A permanent-failure ends every subscription of the address " +
          "(non_existent_email); every update is kept with its email. An unknown reference, or a `to` that is not " +
          "the email's address, changes nothing and is answered 204 too."
      )
  )
  .addError(InvalidRequestResponse)
  .addError(UnprocessableEntityResponse)
{}

/** The queue's health, open to every caller (monitoring has no token). */
export class AlertsHealthGroup extends HttpApiGroup.make("alertsHealth")
  .add(HttpApiEndpoint.get("healthcheck", "/healthcheck").addSuccess(json(Healthcheck)))
{}

/** The email alert API on its own, as client apps and the SDK see it (Notify's callbacks are the host's to add). */
export class AlertsApi extends HttpApi.make("alerts").add(AlertsGroup).add(AlertsHealthGroup) {}
