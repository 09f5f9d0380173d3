import { Schema } from "effect"
import { Criteria } from "./criteria"
import { Timestamp } from "./text"

/** How often a subscriber hears about a list: one email per notification, or a daily or weekly digest. */
export const Frequency = Schema.Literal("immediately", "daily", "weekly").annotations({
  identifier: "Frequency",
  message: () => ({ message: "must be immediately, daily or weekly", override: true })
})
export type Frequency = typeof Frequency.Type

/** Why a subscription exists. */
export const SubscriptionSource = Schema.Literal(
  "user_signed_up",
  "imported",
  "frequency_changed",
  "subscriber_list_changed"
).annotations({ identifier: "SubscriptionSource" })
export type SubscriptionSource = typeof SubscriptionSource.Type

/** Why a subscription ended. */
export const EndedReason = Schema.Literal(
  "unsubscribed",
  "frequency_changed",
  "non_existent_email",
  "subscriber_deactivated"
).annotations({ identifier: "EndedReason" })
export type EndedReason = typeof EndedReason.Type

/** A list's `document_type` or supertype: `""` when the list does not filter on it. */
const TypeField = Schema.String

/** A subscriber list as the API shows it. `tags` and `links` show `any` criteria as plain arrays. */
export class SubscriberList extends Schema.Class<SubscriberList>("SubscriberList")({
  id: Schema.Int,
  title: Schema.String,
  slug: Schema.String,
  subscription_url: Schema.String,
  external_delivery_id: Schema.String,
  document_type: TypeField,
  email_document_supertype: TypeField,
  government_document_supertype: TypeField,
  tags: Criteria,
  links: Criteria,
  content_id: Schema.NullOr(Schema.String),
  created_at: Timestamp,
  updated_at: Timestamp
}) {}

export class Subscriber extends Schema.Class<Subscriber>("Subscriber")({
  id: Schema.Int,
  address: Schema.String,
  created_at: Timestamp,
  updated_at: Timestamp,
  sso_user_uid: Schema.NullOr(Schema.String),
  deactivated_at: Schema.NullOr(Timestamp)
}) {}

export class Subscription extends Schema.Class<Subscription>("Subscription")({
  id: Schema.UUID,
  subscriber_id: Schema.Int,
  subscriber_list_id: Schema.Int,
  frequency: Frequency,
  source: SubscriptionSource,
  ended_at: Schema.NullOr(Timestamp),
  ended_reason: Schema.NullOr(EndedReason),
  sso_user_uid: Schema.NullOr(Schema.String),
  created_at: Timestamp,
  updated_at: Timestamp
}) {}

/** A subscription in a subscriber's listing: with its list. */
export class SubscriptionWithList extends Subscription.extend<SubscriptionWithList>("SubscriptionWithList")({
  subscriber_list: SubscriberList
}) {}

/** One subscription looked up on its own: with its list and its subscriber. */
export class SubscriptionDetails extends Subscription.extend<SubscriptionDetails>("SubscriptionDetails")({
  subscriber_list: SubscriberList,
  subscriber: Subscriber
}) {}
