import type { StoreError } from "@civicstack/kit"
import { Context, Schema } from "effect"
import type { Duration, Effect, Option } from "effect"
import type { EmailAddress } from "../domain/address"
import type { ListCriteria } from "../domain/criteria"
import type { NotificationFacts } from "../domain/matching"
import type {
  EndedReason,
  Frequency,
  NewNotification,
  Notification,
  Subscriber,
  SubscriberList,
  Subscription,
  SubscriptionSource
} from "../domain/records"

/** Another subscriber has this address (compared case-insensitively). */
export class AddressTaken extends Schema.TaggedError<AddressTaken>()("AddressTaken", {
  address: Schema.String
}) {}

/** A notification with this content_id, base_path and public_updated_at was received before. */
export class DuplicateContentChange extends Schema.TaggedError<DuplicateContentChange>()("DuplicateContentChange", {
  contentId: Schema.String,
  basePath: Schema.String,
  publicUpdatedAt: Schema.DateFromSelf
}) {}

export interface NewSubscriberList {
  readonly title: string
  /** Normalised (`normaliseListCriteria`); the store keys lists by their digest. */
  readonly criteria: ListCriteria
}

export interface FoundOrCreatedList {
  readonly list: SubscriberList
  /** False when a list with the same criteria existed; its title is then the new one. */
  readonly created: boolean
}

export interface NewSubscription {
  readonly subscriberId: number
  readonly subscriberListId: number
  readonly frequency: Frequency
  readonly source: SubscriptionSource
}

/**
 * What subscribing did: `created` a subscription where none was active; `unchanged` when one was active with the
 * same frequency; `frequency_changed` when one was active with another frequency: it ended (`frequency_changed`)
 * and the returned one replaced it (source `frequency_changed`).
 */
export interface Subscribed {
  readonly subscription: Subscription
  readonly outcome: "created" | "unchanged" | "frequency_changed"
}

export interface SubscriptionWithList {
  readonly subscription: Subscription
  readonly list: SubscriberList
}

export interface SubscriptionDetails {
  readonly subscription: Subscription
  readonly list: SubscriberList
  readonly subscriber: Subscriber
}

/** A list with how many active subscriptions it has at each frequency. */
export interface ListWithCounts {
  readonly list: SubscriberList
  readonly activeSubscriptions: Readonly<Record<Frequency, number>>
}

/** An active subscription to a list, with its subscriber. */
export interface ListSubscriber {
  readonly subscriber: Subscriber
  readonly subscription: Subscription
}

/** Reasons a subscription ends other than a change of frequency (which `changeFrequency` makes). */
export type EndingReason = Exclude<EndedReason, "frequency_changed">

export interface EndedSubscription {
  readonly subscription: Subscription
  /** Ending it left the subscriber with no active subscription, so the subscriber was deactivated. */
  readonly subscriberDeactivated: boolean
}

/** One use of an allowance: granted, or refused until its window ends. */
export type AllowanceUse = { readonly granted: true } | { readonly granted: false; readonly renewsAt: Date }

/**
 * Storage of subscriber lists, subscribers, subscriptions and notifications. Memory and SQL adapters pass one shared
 * suite. Every operation is atomic on its own and takes its time from `Clock`; `transaction` groups several (on SQL,
 * with whatever else the caller does on the same connection, such as enqueuing jobs).
 */
export class AlertsStore extends Context.Tag("@civicstack/core-alerts/AlertsStore")<AlertsStore, {
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StoreError, R>

  /**
   * The list with these criteria (by their digest), its title set to `title`; or a new list, with a slug from the
   * title (`-2`, `-3`... when taken).
   */
  readonly findOrCreateList: (list: NewSubscriberList) => Effect.Effect<FoundOrCreatedList, StoreError>
  readonly listByCriteria: (criteria: ListCriteria) => Effect.Effect<Option.Option<SubscriberList>, StoreError>
  readonly listBySlug: (slug: string) => Effect.Effect<Option.Option<SubscriberList>, StoreError>
  readonly listById: (id: number) => Effect.Effect<Option.Option<SubscriberList>, StoreError>
  /** Every list, by slug, with its active subscriptions counted by frequency (zero for a frequency nobody chose). */
  readonly listsWithCounts: Effect.Effect<ReadonlyArray<ListWithCounts>, StoreError>

  readonly subscriberById: (id: number) => Effect.Effect<Option.Option<Subscriber>, StoreError>
  /** Case-insensitive. */
  readonly subscriberByAddress: (address: string) => Effect.Effect<Option.Option<Subscriber>, StoreError>
  readonly createSubscriber: (address: EmailAddress) => Effect.Effect<Subscriber, StoreError | AddressTaken>
  /** `None` for an unknown subscriber. */
  readonly changeAddress: (
    id: number,
    address: EmailAddress
  ) => Effect.Effect<Option.Option<Subscriber>, StoreError | AddressTaken>
  /**
   * Deactivates the subscriber and ends each of its active subscriptions with `reason`. `None` when the subscriber is
   * unknown or was already deactivated (then nothing changes).
   */
  readonly deactivateSubscriber: (
    id: number,
    reason: EndingReason
  ) => Effect.Effect<Option.Option<Subscriber>, StoreError>
  /** Clears `deactivatedAt` (a subscriber who was active is returned as it was). `None` for an unknown subscriber. */
  readonly reactivateSubscriber: (id: number) => Effect.Effect<Option.Option<Subscriber>, StoreError>
  /**
   * Inside a `transaction`, makes other transactions that lock the same subscriber wait until this one ends: for
   * decisions that read what those would write (how many emails the address was sent).
   */
  readonly lockSubscriber: (id: number) => Effect.Effect<void, StoreError>
  /**
   * Counts one use of `key`'s allowance of `limit` uses per `window`, a window starting at the first use after the
   * last one ended. A spent allowance counts nothing and says when its window ends.
   */
  readonly useAllowance: (
    key: string,
    limit: number,
    window: Duration.Duration
  ) => Effect.Effect<AllowanceUse, StoreError>

  /**
   * Keeps one active subscription per subscriber and list: creates it, keeps it, or replaces it when the frequency
   * differs (see `Subscribed`). Fails with a `StoreError` if the subscriber or list does not exist.
   */
  readonly subscribe: (subscription: NewSubscription) => Effect.Effect<Subscribed, StoreError>
  /**
   * The active subscription with this id at `frequency`: the same one if it has it already, otherwise it ends
   * (`frequency_changed`) and a new one starts (source `frequency_changed`). `None` when unknown or ended.
   */
  readonly changeFrequency: (
    id: string,
    frequency: Frequency
  ) => Effect.Effect<Option.Option<Subscription>, StoreError>
  /**
   * Ends the active subscription with this id; a subscriber left with no active subscription is deactivated in the
   * same step. `None` when unknown or already ended.
   */
  readonly endSubscription: (
    id: string,
    reason: EndingReason
  ) => Effect.Effect<Option.Option<EndedSubscription>, StoreError>
  /** The subscriber's active subscriptions, by list title (then id), each with its list. */
  readonly activeSubscriptionsOf: (subscriberId: number) => Effect.Effect<ReadonlyArray<SubscriptionWithList>, StoreError>
  /** The list's active subscriptions with their subscribers, by subscriber id; empty for an unknown list. */
  readonly activeSubscribersOf: (subscriberListId: number) => Effect.Effect<ReadonlyArray<ListSubscriber>, StoreError>
  /** Any subscription, ended or not, with its list and subscriber. */
  readonly subscriptionById: (id: string) => Effect.Effect<Option.Option<SubscriptionDetails>, StoreError>

  /**
   * Records a notification. When its content_id, base_path and public_updated_at are all given and a notification
   * with the same three was recorded before, fails with `DuplicateContentChange` and records nothing.
   */
  readonly insertNotification: (
    notification: NewNotification
  ) => Effect.Effect<Notification, StoreError | DuplicateContentChange>
  /**
   * As `insertNotification`, and the job that fans it out (`fanOutJob`) with it, both or neither, in one statement:
   * a single round trip instead of a transaction's four. Only where the store and the job queue share a database (the
   * SQL store with `@civicstack/jobs`' `layerSql`, as the host provides); absent elsewhere, where the service records
   * both in a transaction of the store.
   */
  readonly insertNotificationAndFanOutJob?: (
    notification: NewNotification
  ) => Effect.Effect<Notification, StoreError | DuplicateContentChange>
  /** The ids (ascending) of the lists the notification matches (`listMatches`). */
  readonly matchingListIds: (notification: NotificationFacts) => Effect.Effect<ReadonlyArray<number>, StoreError>
}>() {}
