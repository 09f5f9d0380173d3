import { Schema } from "effect"
import { Criteria, NotificationTags } from "./criteria"
import { Frequency, Subscriber, SubscriberList, Subscription, SubscriptionDetails, SubscriptionWithList } from "./records"
import { NonBlankText, StorableText, Timestamp } from "./text"

/** A field a client may send as `null` to mean that it is absent. */
const Optional = <A, I>(schema: Schema.Schema<A, I>) => Schema.optional(Schema.NullOr(schema))

const TypeField = StorableText(500)

/** Report every refused field of a body, not only the first, so that a 422 names them all. */
const everyIssue = { parseOptions: { errors: "all" } } as const

/** The fields a subscriber list is found by: its criteria. */
const CriteriaFields = {
  tags: Optional(Criteria),
  links: Optional(Criteria),
  document_type: Optional(TypeField),
  email_document_supertype: Optional(TypeField),
  government_document_supertype: Optional(TypeField),
  content_id: Optional(StorableText(100))
}

const hasCriteria = (body: {
  readonly tags?: object | null | undefined
  readonly links?: object | null | undefined
  readonly document_type?: string | null | undefined
  readonly email_document_supertype?: string | null | undefined
  readonly government_document_supertype?: string | null | undefined
  readonly content_id?: string | null | undefined
}) =>
  Object.keys(body.tags ?? {}).length > 0 ||
  Object.keys(body.links ?? {}).length > 0 ||
  [body.document_type, body.email_document_supertype, body.government_document_supertype, body.content_id].some(
    (field) => field !== undefined && field !== null && field !== ""
  )

/**
 * `POST /subscriber-lists`: finds the list with exactly these criteria or creates it. A list must have something to
 * match on: tags, links, a type field or a content_id.
 */
export const CreateSubscriberListBody = Schema.Struct({
  title: NonBlankText(1000),
  ...CriteriaFields
}).annotations(everyIssue).pipe(
  Schema.filter((body) =>
    hasCriteria(body) || {
      path: ["tags"],
      message: "a list needs tags, links, document_type, a supertype or content_id to match on"
    }
  )
).annotations({ identifier: "CreateSubscriberListBody" })
export type CreateSubscriberListBody = typeof CreateSubscriberListBody.Type

/** What a path or query may hold: unreserved characters, the sub-delimiters but `(` and `)`, `:` and `%XX`. */
const SAFE = "(?:[A-Za-z0-9\\-._~!$&'*+,;=:]|%[0-9A-Fa-f]{2})"

/**
 * A path on the site with an optional query, which a link can be built on: non-empty segments (so no `//`), and none
 * of the characters that could end a Markdown link or leave the site (`()[]<>\`, whitespace, `@`, `#`).
 */
const SITE_PATH = new RegExp(`^/(?:${SAFE}+/?)*(?:\\?(?:${SAFE}|[/?])*)?$`)

export const isSitePath = (path: string) => SITE_PATH.test(path)

export const SITE_PATH_PROBLEM =
  "must be a path on the site with an optional query, such as /email/manage?from=alert: no ()[]<>\\@#, spaces or //"

const SitePath = StorableText(2000).pipe(Schema.filter((path) => isSitePath(path) || SITE_PATH_PROBLEM))

/** `POST /notifications` and `POST /content-changes`. */
export const CreateNotificationBody = Schema.Struct({
  subject: Optional(StorableText(1000)),
  body: Optional(StorableText(100_000)),
  title: Optional(StorableText(1000)),
  description: Optional(StorableText(10_000)),
  change_note: Optional(StorableText(10_000)),
  tags: Optional(NotificationTags),
  links: Optional(NotificationTags),
  document_type: Optional(TypeField),
  email_document_supertype: Optional(TypeField),
  government_document_supertype: Optional(TypeField),
  content_id: Optional(StorableText(100)),
  base_path: Optional(SitePath),
  public_updated_at: Optional(Timestamp),
  publishing_app: Optional(StorableText(200)),
  from_address_id: Optional(StorableText(200)),
  urgent: Optional(Schema.Boolean),
  priority: Optional(Schema.Literal("normal", "high")),
  header: Optional(StorableText(10_000)),
  footer: Optional(StorableText(10_000)),
  footnote: Optional(StorableText(10_000))
}).annotations(everyIssue).pipe(
  Schema.filter((body) => {
    const given = (text: string | null | undefined) => typeof text === "string" && text.trim() !== ""
    if (given(body.title) || (given(body.subject) && given(body.body))) return true
    return {
      path: [given(body.subject) ? "body" : "subject"],
      message: "a notification needs a subject and a body, or a title"
    }
  })
).annotations({ identifier: "CreateNotificationBody" })
export type CreateNotificationBody = typeof CreateNotificationBody.Type

export const NotificationQueued = Schema.Struct({
  message: Schema.Literal("Notification queued for sending")
}).annotations({ identifier: "NotificationQueued" })

/** A subscriber list's id: an integer, or its digits as a string. */
const ListId = Schema.Union(Schema.Int, Schema.NumberFromString.pipe(Schema.int())).pipe(
  Schema.positive({ message: () => "must be the id of a subscriber list" })
)

/**
 * `POST /subscriptions`: the list as `subscriber_list_id` or, as older clients send it, `subscribable_id`; decoded
 * to `subscriber_list_id` alone. `frequency` defaults to `immediately`.
 */
export const CreateSubscriptionBody = Schema.transform(
  Schema.Struct({
    address: NonBlankText(320),
    // exact: a refused value is reported once, not also as "not undefined"
    subscriber_list_id: Schema.optionalWith(ListId, { exact: true }),
    subscribable_id: Schema.optionalWith(ListId, { exact: true }),
    frequency: Schema.optionalWith(Frequency, { exact: true })
  }).annotations(everyIssue).pipe(
    Schema.filter((body) => {
      const { subscribable_id, subscriber_list_id } = body
      if (subscriber_list_id === undefined && subscribable_id === undefined) {
        return { path: ["subscriber_list_id"], message: "is missing (or subscribable_id)" }
      }
      return subscriber_list_id === undefined || subscribable_id === undefined || subscriber_list_id === subscribable_id ||
        { path: ["subscribable_id"], message: "names another list than subscriber_list_id" }
    })
  ),
  Schema.Struct({ address: Schema.String, subscriber_list_id: Schema.Int, frequency: Frequency }),
  {
    strict: true,
    decode: ({ address, frequency, subscribable_id, subscriber_list_id }) => ({
      address,
      subscriber_list_id: (subscriber_list_id ?? subscribable_id)!,
      frequency: frequency ?? "immediately"
    }),
    encode: ({ address, frequency, subscriber_list_id }) => ({ address, subscriber_list_id, frequency })
  }
).annotations({ identifier: "CreateSubscriptionBody" })
export type CreateSubscriptionBody = typeof CreateSubscriptionBody.Type

export const ChangeAddressBody = Schema.Struct({ new_address: NonBlankText(320) }).annotations({
  identifier: "ChangeAddressBody"
})

export const ChangeFrequencyBody = Schema.Struct({ frequency: Frequency }).annotations({
  identifier: "ChangeFrequencyBody"
})

/** `POST /subscribers/auth-token`: email the subscriber a link to `destination` carrying a token. */
export const AuthTokenBody = Schema.Struct({
  address: NonBlankText(320),
  destination: SitePath,
  redirect: Optional(SitePath)
}).annotations({ ...everyIssue, identifier: "AuthTokenBody" })
export type AuthTokenBody = typeof AuthTokenBody.Type

/**
 * `POST /subscriptions/auth-token`: email the address a link that confirms its subscription to the list whose slug
 * is `topic_id`, at `frequency` (nothing is stored until the site calls `POST /subscriptions`).
 */
export const SubscriptionAuthTokenBody = Schema.Struct({
  address: NonBlankText(320),
  topic_id: NonBlankText(1000),
  frequency: Frequency
}).annotations({ ...everyIssue, identifier: "SubscriptionAuthTokenBody" })
export type SubscriptionAuthTokenBody = typeof SubscriptionAuthTokenBody.Type

/** The answer of `POST /subscriptions/auth-token`: the email is queued. */
export const ConfirmationQueued = Schema.Struct({}).annotations({ identifier: "ConfirmationQueued" })

export const SubscriberListResponse = Schema.Struct({ subscriber_list: SubscriberList })
export const SubscriberResponse = Schema.Struct({ subscriber: Subscriber })
export const SubscriptionResponse = Schema.Struct({ subscription: Subscription })
export const SubscriptionDetailsResponse = Schema.Struct({ subscription: SubscriptionDetails })
export const SubscriptionCreatedResponse = Schema.Struct({ id: Schema.UUID, subscription: Subscription })
export const SubscriberSubscriptionsResponse = Schema.Struct({
  subscriber: Subscriber,
  subscriptions: Schema.Array(SubscriptionWithList)
})

export const HealthStatus = Schema.Literal("ok", "warning", "critical").annotations({ identifier: "HealthStatus" })
export type HealthStatus = typeof HealthStatus.Type

export const Healthcheck = Schema.Struct({
  checks: Schema.Struct({
    queue_size: Schema.Struct({ status: HealthStatus }),
    queue_age: Schema.Struct({ status: HealthStatus }),
    /** Critical while delivery is paused because the provider refuses to send for the service; until when. */
    delivery: Schema.optional(Schema.Struct({ status: HealthStatus, paused_until: Schema.optional(Schema.String) }))
  }),
  status: HealthStatus
}).annotations({ identifier: "Healthcheck" })

/** Notify's statuses of an email, as its delivery status callback sends them. */
export const DeliveryStatusField = Schema.Literal("delivered", "permanent-failure", "temporary-failure", "technical-failure")

/**
 * `POST /status-updates`: GOV.UK Notify's delivery status callback. `reference` is the email's id, as the `notify`
 * provider sent it; `to` must be the email's address for the update to count.
 */
export const StatusUpdateBody = Schema.Struct({
  id: NonBlankText(100),
  reference: Schema.NullOr(StorableText(100)),
  to: StorableText(320),
  status: DeliveryStatusField,
  created_at: Optional(Timestamp),
  completed_at: Optional(Timestamp),
  sent_at: Optional(Timestamp),
  notification_type: Optional(StorableText(20))
}).annotations({ ...everyIssue, identifier: "StatusUpdateBody" })
export type StatusUpdateBody = typeof StatusUpdateBody.Type
