import type { JobQueueError } from "@civicstack/jobs"
import { StoreError } from "@civicstack/kit"
import { Clock, Context, Duration, Effect, Layer, Option } from "effect"
import { ContentChangeAlreadyReceived } from "../api/errors"
import type {
  SubscriberListNotFound,
  SubscriberNotFound,
  SubscriptionNotFound,
  TooManyAuthTokens,
  UnprocessableEntity
} from "../api/errors"
import type { HealthStatus } from "../api/requests"
import type { EmailAddress } from "../domain/address"
import { hasCriteria } from "../domain/criteria"
import type { ListCriteria } from "../domain/criteria"
import { fanOutJob } from "../domain/jobs"
import type { Frequency, NewNotification, Notification, Subscriber, SubscriberList, Subscription } from "../domain/records"
import type { Thresholds } from "../settings"
import type { SubscriptionDetails, SubscriptionWithList } from "../storage/AlertsStore"
import { AlertsParts } from "./AlertsParts"
import type { AuthTokenRequest, SubscriptionConfirmationRequest } from "./confirmations"
import { makeConfirmations } from "./confirmations"
import { checkedAddress, isSlug, listNotFound, orFail, refused, subscriberNotFound, subscriptionNotFound } from "./refusals"
import type { CallbackAccess } from "./deliveryReports"
import { makeDeliveryReports } from "./deliveryReports"
import type { DeliveryReport, DeliveryReportOutcome } from "../domain/deliveryStatus"
import { isUuid } from "../domain/ids"

export interface ListRequest {
  readonly title: string
  readonly criteria: ListCriteria
}

export interface FoundOrCreated<A> {
  readonly value: A
  /** False when it existed already. */
  readonly created: boolean
}

export interface SubscribeRequest {
  readonly address: string
  readonly subscriberListId: number
  readonly frequency: Frequency
}

export type { AuthTokenRequest, SubscriptionConfirmationRequest } from "./confirmations"

export interface SubscriberSubscriptions {
  readonly subscriber: Subscriber
  /** Active ones, by list title. */
  readonly subscriptions: ReadonlyArray<SubscriptionWithList>
}

export interface Workload {
  readonly queueSize: number
  /** Of the oldest email waiting for an immediate subscriber (or a single email); null when none waits. */
  readonly oldestPendingAge: Duration.Duration | null
  /** Until when this process's delivery is paused (the provider refuses the service as a sender); null when it is not. */
  readonly deliveryPausedUntil: Date | null
}

export interface Health {
  readonly queueSize: HealthStatus
  readonly queueAge: HealthStatus
  /** Critical while delivery is paused. */
  readonly delivery: HealthStatus
  readonly deliveryPausedUntil: Date | null
  /** The worst of the checks. */
  readonly status: HealthStatus
}

/** Ids are positive safe integers: any other number names nothing, and is never sent to the database. */
const isRecordId = (id: number) => Number.isSafeInteger(id) && id > 0

const statusOf = <A>(value: A, thresholds: Thresholds<A>, atLeast: (a: A, b: A) => boolean): HealthStatus =>
  atLeast(value, thresholds.critical) ? "critical" : atLeast(value, thresholds.warning) ? "warning" : "ok"

const SEVERITY: ReadonlyArray<HealthStatus> = ["ok", "warning", "critical"]
const worst = (statuses: ReadonlyArray<HealthStatus>): HealthStatus =>
  SEVERITY[Math.max(...statuses.map((status) => SEVERITY.indexOf(status)))]!

const given = (text: string | null) => text !== null && text.trim() !== ""

const make = Effect.gen(function*() {
  const parts = yield* AlertsParts
  const { deliveryPause, emails, jobs, settings, store } = parts

  const findOrCreateList = ({ criteria, title }: ListRequest) =>
    Effect.gen(function*() {
      if (title.trim() === "") return yield* refused({ title: "must not be blank" })
      if (!hasCriteria(criteria)) {
        return yield* refused({
          tags: "a list needs tags, links, document_type, a supertype or content_id to match on"
        })
      }
      const { created, list } = yield* store.findOrCreateList({ title, criteria })
      return { value: list, created }
    })

  const listByCriteria = (criteria: ListCriteria) => Effect.flatMap(store.listByCriteria(criteria), orFail(listNotFound))
  const listBySlug = (slug: string) =>
    isSlug(slug) ? Effect.flatMap(store.listBySlug(slug), orFail(listNotFound)) : Effect.fail(listNotFound)

  const queueNotification = (notification: NewNotification) =>
    Effect.gen(function*() {
      if (!given(notification.title) && !(given(notification.subject) && given(notification.body))) {
        const missing = given(notification.subject) ? ["body"] : given(notification.body) ? ["subject"] : ["subject", "body"]
        return yield* refused(Object.fromEntries(
          missing.map((field) => [field, "a notification needs a subject and a body, or a title"])
        ))
      }
      const recordWithJob = store.insertNotificationAndFanOutJob ?? ((notification: NewNotification) =>
        store.transaction(Effect.gen(function*() {
          const recorded = yield* store.insertNotification(notification)
          yield* jobs.enqueue(fanOutJob, { notificationId: recorded.id })
          return recorded
        })))
      return yield* recordWithJob(notification).pipe(
        Effect.catchTag("DuplicateContentChange", () =>
          Effect.fail(new ContentChangeAlreadyReceived({ error: "Content change already received" })))
      )
    })

  const subscriptionsOf = (subscriberId: number) =>
    Effect.gen(function*() {
      if (!isRecordId(subscriberId)) return yield* subscriberNotFound
      const subscriber = yield* Effect.flatMap(store.subscriberById(subscriberId), orFail(subscriberNotFound))
      return { subscriber, subscriptions: yield* store.activeSubscriptionsOf(subscriber.id) }
    })

  const changeAddress = (subscriberId: number, newAddress: string) =>
    Effect.gen(function*() {
      const address = yield* checkedAddress("new_address", newAddress)
      if (!isRecordId(subscriberId)) return yield* subscriberNotFound
      return yield* store.changeAddress(subscriberId, address).pipe(
        Effect.catchTag("AddressTaken", () => Effect.fail(refused({ new_address: "is already used by another subscriber" }))),
        Effect.flatMap(orFail(subscriberNotFound))
      )
    })

  const deactivateSubscriber = (subscriberId: number) =>
    isRecordId(subscriberId)
      ? store.deactivateSubscriber(subscriberId, "unsubscribed").pipe(Effect.flatMap(orFail(subscriberNotFound)), Effect.asVoid)
      : Effect.fail(subscriberNotFound)

  /** The subscriber with this address, active: found (and reactivated) or created. */
  const activeSubscriber = (address: EmailAddress): Effect.Effect<Subscriber, StoreError> =>
    Effect.gen(function*() {
      const existing = yield* store.subscriberByAddress(address)
      if (Option.isNone(existing)) {
        // another request may create the same subscriber first: then it is found on a second look
        return yield* store.createSubscriber(address).pipe(
          Effect.catchTag("AddressTaken", () =>
            Effect.flatMap(
              store.subscriberByAddress(address),
              orFail(new StoreError({ message: "alerts: an address was taken, yet no subscriber has it" }))
            ))
        )
      }
      if (existing.value.deactivatedAt === null) return existing.value
      return Option.getOrElse(yield* store.reactivateSubscriber(existing.value.id), () => existing.value)
    })

  const subscribe = ({ address, frequency, subscriberListId }: SubscribeRequest) =>
    Effect.gen(function*() {
      const checked = yield* checkedAddress("address", address)
      if (!isRecordId(subscriberListId)) return yield* listNotFound
      const list = yield* Effect.flatMap(store.listById(subscriberListId), orFail(listNotFound))
      return yield* store.transaction(Effect.gen(function*() {
        const subscriber = yield* activeSubscriber(checked)
        const { outcome, subscription } = yield* store.subscribe({
          subscriberId: subscriber.id,
          subscriberListId: list.id,
          frequency,
          source: "user_signed_up"
        })
        return { value: subscription, created: outcome === "created" }
      }))
    })

  const subscription = (id: string) =>
    isUuid(id)
      ? Effect.flatMap(store.subscriptionById(id.toLowerCase()), orFail(subscriptionNotFound))
      : Effect.fail(subscriptionNotFound)

  const changeFrequency = (id: string, frequency: Frequency) =>
    isUuid(id)
      ? Effect.flatMap(store.changeFrequency(id.toLowerCase(), frequency), orFail(subscriptionNotFound))
      : Effect.fail(subscriptionNotFound)

  const unsubscribe = (id: string) =>
    isUuid(id)
      ? store.endSubscription(id.toLowerCase(), "unsubscribed").pipe(Effect.flatMap(orFail(subscriptionNotFound)), Effect.asVoid)
      : Effect.fail(subscriptionNotFound)

  const workload = Effect.gen(function*() {
    const figures = yield* emails.figures
    const now = yield* Clock.currentTimeMillis
    const since = figures.oldestImmediatePendingSince
    const { pausedUntil } = yield* deliveryPause.state
    return {
      queueSize: figures.size,
      oldestPendingAge: since === null ? null : Duration.millis(Math.max(0, now - since.getTime())),
      deliveryPausedUntil: pausedUntil !== null && pausedUntil.getTime() > now ? pausedUntil : null
    }
  })

  const health = Effect.map(workload, ({ deliveryPausedUntil, oldestPendingAge, queueSize: size }) => {
    const { queueAge: ageThresholds, queueSize: sizeThresholds } = settings.healthThresholds
    const queueSize = statusOf(size, sizeThresholds, (a, b) => a >= b)
    const queueAge = oldestPendingAge === null
      ? "ok"
      : statusOf(oldestPendingAge, ageThresholds, Duration.greaterThanOrEqualTo)
    const delivery: HealthStatus = deliveryPausedUntil === null ? "ok" : "critical"
    return { queueSize, queueAge, delivery, deliveryPausedUntil, status: worst([queueSize, queueAge, delivery]) }
  })

  return {
    publicSiteUrl: settings.publicSiteUrl,
    findOrCreateList,
    listByCriteria,
    listBySlug,
    queueNotification,
    subscriptionsOf,
    changeAddress,
    deactivateSubscriber,
    subscribe,
    subscription,
    changeFrequency,
    unsubscribe,
    ...makeConfirmations(parts),
    ...makeDeliveryReports(parts),
    health,
    workload
  }
})

/** The email alert service's request side: lists, notifications, subscribers, subscriptions, auth tokens, health. */
export class Alerts extends Context.Tag("@civicstack/core-alerts/Alerts")<Alerts, {
  /** The base of the links in views and emails (`subscription_url`). */
  readonly publicSiteUrl: string

  /** The list with these criteria, its title set to `title`, or a new one. */
  readonly findOrCreateList: (
    request: ListRequest
  ) => Effect.Effect<FoundOrCreated<SubscriberList>, UnprocessableEntity | StoreError>
  /** The list whose criteria are exactly these. */
  readonly listByCriteria: (criteria: ListCriteria) => Effect.Effect<SubscriberList, SubscriberListNotFound | StoreError>
  readonly listBySlug: (slug: string) => Effect.Effect<SubscriberList, SubscriberListNotFound | StoreError>

  /**
   * Records the notification and enqueues its fan-out in one transaction, so that no notification is recorded
   * without the job that sends it.
   */
  readonly queueNotification: (
    notification: NewNotification
  ) => Effect.Effect<Notification, UnprocessableEntity | ContentChangeAlreadyReceived | StoreError | JobQueueError>

  readonly subscriptionsOf: (
    subscriberId: number
  ) => Effect.Effect<SubscriberSubscriptions, SubscriberNotFound | StoreError>
  /** 422 when the address is not one, or another subscriber has it (compared case-insensitively). */
  readonly changeAddress: (
    subscriberId: number,
    newAddress: string
  ) => Effect.Effect<Subscriber, SubscriberNotFound | UnprocessableEntity | StoreError>
  /** Ends every active subscription (`unsubscribed`) and deactivates; not found when unknown or deactivated. */
  readonly deactivateSubscriber: (subscriberId: number) => Effect.Effect<void, SubscriberNotFound | StoreError>

  /**
   * Subscribes the address (a new subscriber when unknown, reactivated when deactivated). `created` is false when
   * an active subscription existed: kept at the same frequency, replaced at another one.
   */
  readonly subscribe: (
    request: SubscribeRequest
  ) => Effect.Effect<FoundOrCreated<Subscription>, SubscriberListNotFound | UnprocessableEntity | StoreError>
  readonly subscription: (id: string) => Effect.Effect<SubscriptionDetails, SubscriptionNotFound | StoreError>
  /** The active subscription at `frequency` (a new one when it changes); not found when unknown or ended. */
  readonly changeFrequency: (
    id: string,
    frequency: Frequency
  ) => Effect.Effect<Subscription, SubscriptionNotFound | StoreError>
  /** Ends it; the subscriber is deactivated once no active subscription is left. Not found when unknown or ended. */
  readonly unsubscribe: (id: string) => Effect.Effect<void, SubscriptionNotFound | StoreError>

  /**
   * Reactivates the subscriber with this address and queues an email with a link to `destination` carrying a JWT,
   * both in one transaction; refused when the address was sent `authTokenLimit.perAddress` of them lately.
   */
  readonly sendAuthToken: (
    request: AuthTokenRequest
  ) => Effect.Effect<Subscriber, SubscriberNotFound | UnprocessableEntity | TooManyAuthTokens | StoreError>
  /**
   * Queues an email asking the address's owner to confirm a subscription to the list (by slug) at `frequency`, with
   * a link to the public site whose JWT holds all three; nothing else is stored. Counted with `sendAuthToken`'s
   * requests against the caller's limit, and refused when the address was sent `authTokenLimit.perAddress` of them
   * lately.
   */
  readonly sendSubscriptionConfirmation: (
    request: SubscriptionConfirmationRequest
  ) => Effect.Effect<void, SubscriberListNotFound | UnprocessableEntity | TooManyAuthTokens | StoreError>

  /** Whether a status callback with this `Authorization` header may come in. */
  readonly statusCallbackAccess: (authorization: string | undefined) => CallbackAccess
  /**
   * Keeps a provider's later report with its email (once; nothing for an unknown email or another address). A
   * permanent failure ends the address's subscriptions (`non_existent_email`) and deactivates its subscriber.
   */
  readonly recordDeliveryReport: (report: DeliveryReport) => Effect.Effect<DeliveryReportOutcome, StoreError>

  readonly health: Effect.Effect<Health, StoreError>
  /** The figures `health` grades: emails and email-making jobs waiting, and how long the oldest email has waited. */
  readonly workload: Effect.Effect<Workload, StoreError>
}>() {
  /** The request side of the service, over the parts that `layerSql` or `layerMemory` built. */
  static readonly layer: Layer.Layer<Alerts, never, AlertsParts> = Layer.effect(Alerts, make)
}
