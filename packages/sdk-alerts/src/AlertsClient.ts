import {
  AlertsApi,
  AuthTokenBody,
  SubscriptionAuthTokenBody,
  ChangeAddressBody,
  ChangeFrequencyBody,
  type ContentChangeAlreadyReceived,
  CreateNotificationBody,
  CreateSubscriberListBody,
  CreateSubscriptionBody,
  type Criteria,
  type Forbidden,
  type Frequency,
  Healthcheck as HealthcheckSchema,
  InvalidRequest,
  type KeyedRecord,
  refusalOf,
  type Subscriber,
  type SubscriberList,
  type SubscriberListNotFound,
  SubscriberListQuery,
  type SubscriberNotFound,
  type Subscription,
  type SubscriptionDetails,
  type SubscriptionNotFound,
  type SubscriptionWithList,
  type TooManyAuthTokens,
  type Unauthenticated,
  type UnprocessableEntity
} from "@civicstack/core-alerts/api"
import { failureMapping, ClientTag } from "@civicstack/kit/sdk"
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import * as HttpApiError from "@effect/platform/HttpApiError"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { Effect, Redacted, Schema } from "effect"
import { AlertsClientError } from "./errors"

export interface AlertsClientOptions {
  /** Where the email alert API is served, e.g. `https://alerts.example.org` (a path prefix is kept). */
  readonly baseUrl: string | URL
  /**
   * Sent as `Authorization: Bearer <token>`: an API token of the single sign-on whose user has `signin` on
   * `email-alert-api`. Without one the service answers `Unauthenticated`, unless its host lets every caller in.
   */
  readonly bearerToken?: string | Redacted.Redacted<string> | undefined
}

/** The queue's health: `status` is the worst of `checks.queue_size` and `checks.queue_age`. */
export type Healthcheck = typeof HealthcheckSchema.Type

/** The service refused the caller: no or a bad token (`Unauthenticated`, 401), or no permission (`Forbidden`, 403). */
export type AccessRefused = Unauthenticated | Forbidden

/**
 * The request was refused as it stands, by the client before sending or by the service: a required field is
 * missing (`InvalidRequest`, 400) or a value is refused (`UnprocessableEntity`, 422). `details` names each field
 * by its name on the wire (`document_type`, `tags.format`).
 */
export type Refused = InvalidRequest | UnprocessableEntity

/** What every call can fail with besides the refusals of its own endpoint. */
export type CallFailure = Refused | AccessRefused | AlertsClientError

/** What a subscriber list matches on. Every field left out is not matched on. */
export interface ListCriteria {
  /** Tag names to values: a plain array or `anyOf(...)` (one value in common is enough), or `allOf(...)`. */
  readonly tags?: Criteria | undefined
  /** Link names to content ids, as `tags`. */
  readonly links?: Criteria | undefined
  readonly documentType?: string | undefined
  readonly emailDocumentSupertype?: string | undefined
  readonly governmentDocumentSupertype?: string | undefined
  readonly contentId?: string | undefined
}

export interface NewSubscriberList extends ListCriteria {
  readonly title: string
}

/** A notification to send to the subscribers of every list it matches. Needs `subject` and `body`, or `title`. */
export interface Notification {
  readonly subject?: string | undefined
  readonly body?: string | undefined
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly changeNote?: string | undefined
  /** The content's tags: names to the values it has. */
  readonly tags?: KeyedRecord<ReadonlyArray<string>> | undefined
  readonly links?: KeyedRecord<ReadonlyArray<string>> | undefined
  readonly documentType?: string | undefined
  readonly emailDocumentSupertype?: string | undefined
  readonly governmentDocumentSupertype?: string | undefined
  /** With `basePath` and `publicUpdatedAt`, what makes a repeated notification refused as already received. */
  readonly contentId?: string | undefined
  readonly basePath?: string | undefined
  readonly publicUpdatedAt?: Date | string | undefined
  readonly publishingApp?: string | undefined
  readonly fromAddressId?: string | undefined
  readonly urgent?: boolean | undefined
  readonly priority?: "normal" | "high" | undefined
  readonly header?: string | undefined
  readonly footer?: string | undefined
  readonly footnote?: string | undefined
}

export interface NewSubscription {
  readonly address: string
  readonly listId: number
  /** `immediately` (the default), `daily` or `weekly`. */
  readonly frequency?: Frequency | undefined
}

export interface AuthTokenRequest {
  readonly address: string
  /** A path on the public site (`/email/manage`) the emailed link leads to, with the token added to its query. */
  readonly destination: string
  /** A path on the public site to carry in the token. */
  readonly redirect?: string | undefined
}

export interface SubscriptionConfirmationRequest {
  readonly address: string
  /** The list's slug. */
  readonly topicId: string
  readonly frequency: Frequency
}

/** `created` when the service answered 201, `found` when the list already existed (200; its title is updated). */
export interface FoundOrCreatedList {
  readonly outcome: "created" | "found"
  readonly subscriberList: SubscriberList
}

/**
 * `created` when the service answered 201; `found` (200) when the address already had an active subscription to
 * the list (with another frequency, that one ended and this one replaced it).
 */
export interface SubscriptionResult {
  readonly outcome: "created" | "found"
  readonly id: string
  readonly subscription: Subscription
}

export interface SubscriberSubscriptions {
  readonly subscriber: Subscriber
  /** The active subscriptions, by list title, each with its list. */
  readonly subscriptions: ReadonlyArray<SubscriptionWithList>
}

export interface AlertsClientService {
  /** `POST /subscriber-lists`: the list with exactly these criteria, created when there is none. */
  readonly findOrCreateList: (list: NewSubscriberList) => Effect.Effect<FoundOrCreatedList, CallFailure>
  /** `GET /subscriber-lists?tags[...]`: the list with exactly these criteria. */
  readonly findList: (criteria: ListCriteria) => Effect.Effect<SubscriberList, SubscriberListNotFound | CallFailure>
  /** `GET /subscriber-lists/{slug}`. */
  readonly getList: (slug: string) => Effect.Effect<SubscriberList, SubscriberListNotFound | CallFailure>
  /** `POST /notifications`: queues the notification for the subscribers of every matching list. */
  readonly notify: (notification: Notification) => Effect.Effect<void, ContentChangeAlreadyReceived | CallFailure>
  /** `POST /content-changes`: `notify` under the name later clients use. */
  readonly sendContentChange: (notification: Notification) => Effect.Effect<void, ContentChangeAlreadyReceived | CallFailure>
  /** `GET /subscribers/{id}/subscriptions`. */
  readonly subscriberSubscriptions: (id: number) => Effect.Effect<SubscriberSubscriptions, SubscriberNotFound | CallFailure>
  /** `PATCH /subscribers/{id}`: an address another subscriber has is refused (`UnprocessableEntity`). */
  readonly changeAddress: (id: number, newAddress: string) => Effect.Effect<Subscriber, SubscriberNotFound | CallFailure>
  /** `DELETE /subscribers/{id}`: ends every active subscription; an already deactivated subscriber is not found. */
  readonly deactivateSubscriber: (id: number) => Effect.Effect<void, SubscriberNotFound | CallFailure>
  /** `POST /subscriptions`. */
  readonly subscribe: (subscription: NewSubscription) => Effect.Effect<SubscriptionResult, SubscriberListNotFound | CallFailure>
  /** `GET /subscriptions/{id}`: with its list and subscriber. */
  readonly getSubscription: (id: string) => Effect.Effect<SubscriptionDetails, SubscriptionNotFound | CallFailure>
  /** `PATCH /subscriptions/{id}`: ends the subscription and answers the one that replaces it. */
  readonly changeFrequency: (id: string, frequency: Frequency) => Effect.Effect<Subscription, SubscriptionNotFound | CallFailure>
  /** `POST /unsubscribe/{id}`. */
  readonly unsubscribe: (id: string) => Effect.Effect<void, SubscriptionNotFound | CallFailure>
  /** `POST /subscribers/auth-token`: emails the subscriber a link to `destination` carrying a sign-in token. */
  readonly sendAuthToken: (
    request: AuthTokenRequest
  ) => Effect.Effect<Subscriber, SubscriberNotFound | TooManyAuthTokens | CallFailure>
  /**
   * `POST /subscriptions/auth-token`: emails the address a link to the public site whose token holds the address,
   * the list's slug and the frequency; nothing is stored until the site subscribes it (`subscribe`).
   */
  readonly sendSubscriptionAuthToken: (
    request: SubscriptionConfirmationRequest
  ) => Effect.Effect<void, SubscriberListNotFound | TooManyAuthTokens | CallFailure>
  /** `GET /healthcheck` (open: needs no token). */
  readonly health: () => Effect.Effect<Healthcheck, AlertsClientError>
}

/** The platform's own 400 body (a service that does not render its refusals in the envelope): one line per field. */
const invalidRequestFromDecodeError = (error: HttpApiError.HttpApiDecodeError): InvalidRequest => {
  const byField = new Map<string, Array<string>>()
  for (const issue of error.issues) {
    const field = issue.path.length === 0 ? "body" : issue.path.map(String).join(".")
    byField.set(field, [...(byField.get(field) ?? []), issue.message])
  }
  const summary = [...byField].map(([field, messages]) => `${field}: ${messages.join("; ")}`).join(", ")
  return new InvalidRequest({ error: summary || error.message, details: Object.fromEntries(byField) })
}

const refineFailures = failureMapping({
  service: "the email alert service",
  clientError: (fields) => new AlertsClientError(fields),
  platformRefusal: invalidRequestFromDecodeError
})

/**
 * Arguments are decoded with the contract's own schemas before anything is sent, so a bad one fails here with the
 * refusal the service would answer (`InvalidRequest` or `UnprocessableEntity`, naming the field).
 */
const decodeArgument = <A, I>(schema: Schema.Schema<A, I>, wireShape: unknown): Effect.Effect<A, Refused> =>
  Effect.mapError(Schema.decodeUnknown(schema)(wireShape), refusalOf)

/** A date as ISO 8601; an invalid one as its text, which the contract's schema then refuses naming the field. */
const dateOnTheWire = (date: Date) => (Number.isNaN(date.getTime()) ? String(date) : date.toISOString())

/** Copies the fields that are given under their names on the wire; dates are sent as ISO 8601. */
const onTheWire = <Input extends object>(
  input: Input,
  wireNames: { readonly [K in keyof Required<Input>]: string }
): Record<string, unknown> => {
  const wire: Record<string, unknown> = {}
  for (const name of Object.keys(wireNames) as Array<keyof Input>) {
    const value = input[name]
    if (value !== undefined) wire[wireNames[name]] = value instanceof Date ? dateOnTheWire(value) : value
  }
  return wire
}

const TYPE_FIELDS = {
  documentType: "document_type",
  emailDocumentSupertype: "email_document_supertype",
  governmentDocumentSupertype: "government_document_supertype",
  contentId: "content_id"
} as const

const LIST_FIELDS = { title: "title", tags: "tags", links: "links", ...TYPE_FIELDS } as const

const NOTIFICATION_FIELDS = {
  subject: "subject",
  body: "body",
  title: "title",
  description: "description",
  changeNote: "change_note",
  tags: "tags",
  links: "links",
  ...TYPE_FIELDS,
  basePath: "base_path",
  publicUpdatedAt: "public_updated_at",
  publishingApp: "publishing_app",
  fromAddressId: "from_address_id",
  urgent: "urgent",
  priority: "priority",
  header: "header",
  footer: "footer",
  footnote: "footnote"
} as const

const SubscriberIdArgument = Schema.Struct({
  id: Schema.Int.pipe(Schema.positive({ message: () => "must be the id of a subscriber" }))
})
const KeyArgument = <const Name extends string>(name: Name) =>
  Schema.Struct({ [name]: Schema.String.pipe(Schema.nonEmptyString({ message: () => "must not be empty" })) } as {
    readonly [K in Name]: Schema.filter<typeof Schema.String>
  })

/** A path segment of the request: ids and slugs are data, so `/` or `?` in one stays inside it. */
const segment = (name: string, value: string): Effect.Effect<string, Refused> =>
  Effect.as(decodeArgument(KeyArgument(name), { [name]: value }), encodeURIComponent(value))

const subscriberPath = (id: number) =>
  Effect.map(decodeArgument(SubscriberIdArgument, { id }), (path) => ({ id: path.id }))

/** Builds a client of the API at `options.baseUrl` on the `HttpClient` in context. */
export const makeAlertsClient = (
  options: AlertsClientOptions
): Effect.Effect<AlertsClientService, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const token = options.bearerToken
    const { alerts, alertsHealth } = yield* HttpApiClient.make(AlertsApi, {
      baseUrl: options.baseUrl,
      ...(token === undefined ? {} : {
        transformClient: HttpClient.mapRequest(
          HttpClientRequest.bearerToken(Redacted.isRedacted(token) ? token : Redacted.make(token))
        )
      })
    })

    const findOrCreateList: AlertsClientService["findOrCreateList"] = (list) =>
      decodeArgument(CreateSubscriberListBody, onTheWire(list, LIST_FIELDS)).pipe(
        Effect.flatMap((payload) => refineFailures(alerts.createSubscriberList({ payload }))),
        Effect.map(({ outcome, subscriber_list }) => ({ outcome, subscriberList: subscriber_list }))
      )

    const findList: AlertsClientService["findList"] = (criteria) =>
      decodeArgument(SubscriberListQuery, {
        ...onTheWire(criteria, { tags: "tags", links: "links", ...TYPE_FIELDS }),
        tags: criteria.tags ?? {},
        links: criteria.links ?? {}
      }).pipe(
        Effect.flatMap((urlParams) => refineFailures(alerts.findSubscriberList({ urlParams }))),
        Effect.map(({ subscriber_list }) => subscriber_list)
      )

    const getList: AlertsClientService["getList"] = (slug) =>
      segment("slug", slug).pipe(
        Effect.flatMap((encoded) => refineFailures(alerts.getSubscriberList({ path: { slug: encoded } }))),
        Effect.map(({ subscriber_list }) => subscriber_list)
      )

    const notification = (endpoint: "createNotification" | "createContentChange") => (input: Notification) =>
      decodeArgument(CreateNotificationBody, onTheWire(input, NOTIFICATION_FIELDS)).pipe(
        Effect.flatMap((payload) => refineFailures(alerts[endpoint]({ payload }))),
        Effect.asVoid
      )

    const subscriberSubscriptions: AlertsClientService["subscriberSubscriptions"] = (id) =>
      subscriberPath(id).pipe(
        Effect.flatMap((path) => refineFailures(alerts.getSubscriberSubscriptions({ path })))
      )

    const changeAddress: AlertsClientService["changeAddress"] = (id, newAddress) =>
      Effect.all([subscriberPath(id), decodeArgument(ChangeAddressBody, { new_address: newAddress })]).pipe(
        Effect.flatMap(([path, payload]) => refineFailures(alerts.changeSubscriberAddress({ path, payload }))),
        Effect.map(({ subscriber }) => subscriber)
      )

    const deactivateSubscriber: AlertsClientService["deactivateSubscriber"] = (id) =>
      subscriberPath(id).pipe(Effect.flatMap((path) => refineFailures(alerts.deactivateSubscriber({ path }))))

    const subscribe: AlertsClientService["subscribe"] = (subscription) =>
      decodeArgument(
        CreateSubscriptionBody,
        onTheWire(subscription, { address: "address", listId: "subscriber_list_id", frequency: "frequency" })
      ).pipe(
        Effect.flatMap((payload) => refineFailures(alerts.createSubscription({ payload }))),
        Effect.map(({ id, outcome, subscription }) => ({ outcome, id, subscription }))
      )

    const getSubscription: AlertsClientService["getSubscription"] = (id) =>
      segment("id", id).pipe(
        Effect.flatMap((encoded) => refineFailures(alerts.getSubscription({ path: { id: encoded } }))),
        Effect.map(({ subscription }) => subscription)
      )

    const changeFrequency: AlertsClientService["changeFrequency"] = (id, frequency) =>
      Effect.all([segment("id", id), decodeArgument(ChangeFrequencyBody, { frequency })]).pipe(
        Effect.flatMap(([encoded, payload]) =>
          refineFailures(alerts.changeSubscriptionFrequency({ path: { id: encoded }, payload }))
        ),
        Effect.map(({ subscription }) => subscription)
      )

    const unsubscribe: AlertsClientService["unsubscribe"] = (id) =>
      segment("id", id).pipe(
        Effect.flatMap((encoded) => refineFailures(alerts.unsubscribe({ path: { id: encoded } })))
      )

    const sendAuthToken: AlertsClientService["sendAuthToken"] = (request) =>
      decodeArgument(
        AuthTokenBody,
        onTheWire(request, { address: "address", destination: "destination", redirect: "redirect" })
      ).pipe(
        Effect.flatMap((payload) => refineFailures(alerts.sendAuthToken({ payload }))),
        Effect.map(({ subscriber }) => subscriber)
      )

    const sendSubscriptionAuthToken: AlertsClientService["sendSubscriptionAuthToken"] = (request) =>
      decodeArgument(
        SubscriptionAuthTokenBody,
        onTheWire(request, { address: "address", topicId: "topic_id", frequency: "frequency" })
      ).pipe(
        Effect.flatMap((payload) => refineFailures(alerts.sendSubscriptionAuthToken({ payload }))),
        Effect.asVoid
      )

    const health: AlertsClientService["health"] = () =>
      refineFailures(alertsHealth.healthcheck()).pipe(
        // The contract has no 400 for the health check: a service that answers one is not speaking it.
        Effect.catchTag("InvalidRequest", (error) =>
          Effect.fail(
            new AlertsClientError({
              reason: "UnexpectedResponse",
              message: `The email alert service refused its health check: ${error.error}`,
              status: 400,
              cause: error
            })
          ))
      )

    return {
      findOrCreateList,
      findList,
      getList,
      notify: notification("createNotification"),
      sendContentChange: notification("createContentChange"),
      subscriberSubscriptions,
      changeAddress,
      deactivateSubscriber,
      subscribe,
      getSubscription,
      changeFrequency,
      unsubscribe,
      sendAuthToken,
      sendSubscriptionAuthToken,
      health
    }
  })

/** The email alert API as an Effect service. */
export class AlertsClient extends ClientTag<AlertsClient, AlertsClientService>()(
  "@civicstack/sdk-alerts/AlertsClient",
  makeAlertsClient
) {}
