import {
  AlertsAccess,
  AlertsApi,
  ContentChangeAlreadyReceived,
  type CreateNotificationBody,
  type CreateSubscriberListBody,
  type CreateSubscriptionBody,
  type Criteria,
  type Frequency,
  type HealthStatus,
  keyedRecord,
  Subscriber,
  SubscriberList,
  SubscriberListNotFound,
  type SubscriberListQuery,
  SubscriberNotFound,
  Subscription,
  SubscriptionDetails,
  SubscriptionNotFound,
  SubscriptionWithList,
  UnprocessableEntity,
  type SubscriptionAuthTokenBody
} from "@civicstack/core-alerts/api"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { baseUrl, fakeTokenAccess, servedOnLoopback } from "@civicstack/kit/testing"
import { Clock, Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"

export const PUBLIC_SITE_URL = "https://www.example.org"

/** The health check warns from this many queued notifications on (the fake never sends them). */
export const QUEUE_WARNING_SIZE = 3

type CriteriaFields = Pick<
  CreateSubscriberListBody,
  "tags" | "links" | "document_type" | "email_document_supertype" | "government_document_supertype" | "content_id"
>

/** Criteria written differently but meaning the same (key order, `[...]` or `{any}`, value order) get one key. */
const criteriaKey = (fields: CriteriaFields): string => {
  const normalised = (criteria: Criteria | null | undefined) =>
    Object.entries(criteria ?? {})
      .map(([name, criterion]) => {
        const [match, values] = "all" in criterion
          ? ["all", criterion.all]
          : ["any", "any" in criterion ? criterion.any : (criterion as ReadonlyArray<string>)]
        return [name, match, [...new Set(values)].sort()] as const
      })
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return JSON.stringify([
    normalised(fields.tags),
    normalised(fields.links),
    fields.document_type ?? "",
    fields.email_document_supertype ?? "",
    fields.government_document_supertype ?? "",
    fields.content_id ?? null
  ])
}

/** As the list shows its criteria: `{any: [...]}` as a plain array. */
const shownCriteria = (criteria: Criteria | null | undefined): Criteria =>
  keyedRecord(
    Object.entries(criteria ?? {}).map(([name, criterion]) =>
      [name, "any" in criterion ? criterion.any : criterion] as const
    )
  )

const slugOf = (title: string) => title.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "") || "list"

const isAddress = (address: string) => /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(address)

const unprocessable = (field: string, problem: string) =>
  new UnprocessableEntity({ error: `${field}: ${problem}`, details: { [field]: [problem] } })

/** A notification as the fake received it, and on which path. */
export interface ReceivedNotification {
  readonly path: "/notifications" | "/content-changes"
  readonly body: CreateNotificationBody
}

export interface ReceivedAuthToken {
  readonly subscriberId: number
  readonly destination: string
  readonly redirect: string | null
}

/** The in-memory state behind the fake service, and what it received. */
export class FakeAlerts extends Effect.Service<FakeAlerts>()("test/FakeAlerts", {
  effect: Effect.gen(function*() {
    const lists = new Map<number, SubscriberList>()
    const listIdsByCriteria = new Map<string, number>()
    const subscribers = new Map<number, Subscriber>()
    const subscriptions = new Map<string, Subscription>()
    const notifications: Array<ReceivedNotification> = []
    const seenContentChanges = new Set<string>()
    const authTokens: Array<ReceivedAuthToken> = []
    const subscriptionConfirmations: Array<SubscriptionAuthTokenBody> = []
    const listQueries: Array<SubscriberListQuery> = []

    const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))

    const freeSlug = (title: string) => {
      const taken = new Set([...lists.values()].map((list) => list.slug))
      const base = slugOf(title)
      let slug = base
      for (let suffix = 2; taken.has(slug); suffix++) slug = `${base}-${suffix}`
      return slug
    }

    const createSubscriberList = (body: CreateSubscriberListBody) =>
      Effect.gen(function*() {
        const at = yield* now
        const key = criteriaKey(body)
        const existingId = listIdsByCriteria.get(key)
        if (existingId !== undefined) {
          const updated = new SubscriberList({ ...lists.get(existingId)!, title: body.title, updated_at: at })
          lists.set(existingId, updated)
          return { subscriber_list: updated, outcome: "found" as const }
        }
        const id = lists.size + 1
        const slug = freeSlug(body.title)
        const list = new SubscriberList({
          id,
          title: body.title,
          slug,
          subscription_url: `${PUBLIC_SITE_URL}/email/subscriptions/new?topic_id=${slug}`,
          external_delivery_id: slug,
          document_type: body.document_type ?? "",
          email_document_supertype: body.email_document_supertype ?? "",
          government_document_supertype: body.government_document_supertype ?? "",
          tags: shownCriteria(body.tags),
          links: shownCriteria(body.links),
          content_id: body.content_id ?? null,
          created_at: at,
          updated_at: at
        })
        lists.set(id, list)
        listIdsByCriteria.set(key, id)
        return { subscriber_list: list, outcome: "created" as const }
      })

    const listWith = (id: number | undefined) =>
      id === undefined || !lists.has(id)
        ? Effect.fail(new SubscriberListNotFound({ error: "Could not find the subscriber list" }))
        : Effect.succeed(lists.get(id)!)

    const findSubscriberList = (query: SubscriberListQuery) => {
      listQueries.push(query)
      return Effect.map(listWith(listIdsByCriteria.get(criteriaKey(query))), (list) => ({ subscriber_list: list }))
    }

    const getSubscriberList = (slug: string) =>
      Effect.map(
        listWith([...lists.values()].find((list) => list.slug === slug)?.id),
        (list) => ({ subscriber_list: list })
      )

    const createNotification = (path: ReceivedNotification["path"], body: CreateNotificationBody) =>
      Effect.gen(function*() {
        const { base_path, content_id, public_updated_at } = body
        if (content_id && base_path && public_updated_at) {
          const seen = JSON.stringify([content_id, base_path, public_updated_at.toISOString()])
          if (seenContentChanges.has(seen)) {
            return yield* new ContentChangeAlreadyReceived({ error: "Content change already received" })
          }
          seenContentChanges.add(seen)
        }
        notifications.push({ path, body })
        return { message: "Notification queued for sending" as const }
      })

    const subscriberWith = (id: number) => {
      const subscriber = subscribers.get(id)
      return subscriber === undefined
        ? Effect.fail(new SubscriberNotFound({ error: "Could not find the subscriber" }))
        : Effect.succeed(subscriber)
    }

    const activeSubscriptionsOf = (subscriberId: number) =>
      [...subscriptions.values()].filter((subscription) =>
        subscription.subscriber_id === subscriberId && subscription.ended_at === null
      )

    const getSubscriberSubscriptions = (id: number) =>
      Effect.map(subscriberWith(id), (subscriber) => ({
        subscriber,
        subscriptions: activeSubscriptionsOf(id)
          .map((subscription) =>
            new SubscriptionWithList({ ...subscription, subscriber_list: lists.get(subscription.subscriber_list_id)! })
          )
          .sort((a, b) => a.subscriber_list.title.localeCompare(b.subscriber_list.title))
      }))

    const subscriberByAddress = (address: string) =>
      [...subscribers.values()].find((subscriber) => subscriber.address.toLowerCase() === address.toLowerCase())

    const changeSubscriberAddress = (id: number, newAddress: string) =>
      Effect.gen(function*() {
        const subscriber = yield* subscriberWith(id)
        if (!isAddress(newAddress)) return yield* unprocessable("new_address", "is not an email address")
        const holder = subscriberByAddress(newAddress)
        if (holder !== undefined && holder.id !== id) {
          return yield* unprocessable("new_address", "is already used by another subscriber")
        }
        const changed = new Subscriber({ ...subscriber, address: newAddress, updated_at: yield* now })
        subscribers.set(id, changed)
        return { subscriber: changed }
      })

    const endSubscription = (subscription: Subscription, reason: NonNullable<Subscription["ended_reason"]>, at: Date) =>
      subscriptions.set(
        subscription.id,
        new Subscription({ ...subscription, ended_at: at, ended_reason: reason, updated_at: at })
      )

    const deactivateSubscriber = (id: number) =>
      Effect.gen(function*() {
        const subscriber = yield* subscriberWith(id)
        if (subscriber.deactivated_at !== null) {
          return yield* new SubscriberNotFound({ error: "Could not find the subscriber" })
        }
        const at = yield* now
        for (const subscription of activeSubscriptionsOf(id)) endSubscription(subscription, "unsubscribed", at)
        subscribers.set(id, new Subscriber({ ...subscriber, deactivated_at: at, updated_at: at }))
      })

    const activeSubscriber = (address: string, at: Date) => {
      const known = subscriberByAddress(address)
      const subscriber = known === undefined
        ? new Subscriber({
          id: subscribers.size + 1,
          address,
          created_at: at,
          updated_at: at,
          sso_user_uid: null,
          deactivated_at: null
        })
        : known.deactivated_at === null
        ? known
        : new Subscriber({ ...known, deactivated_at: null, updated_at: at })
      subscribers.set(subscriber.id, subscriber)
      return subscriber
    }

    const startSubscription = (
      subscriberId: number,
      listId: number,
      frequency: Frequency,
      source: Subscription["source"],
      at: Date
    ) => {
      const subscription = new Subscription({
        id: randomUUID(),
        subscriber_id: subscriberId,
        subscriber_list_id: listId,
        frequency,
        source,
        ended_at: null,
        ended_reason: null,
        sso_user_uid: null,
        created_at: at,
        updated_at: at
      })
      subscriptions.set(subscription.id, subscription)
      return subscription
    }

    const createSubscription = (body: CreateSubscriptionBody) =>
      Effect.gen(function*() {
        const list = yield* listWith(body.subscriber_list_id)
        if (!isAddress(body.address)) return yield* unprocessable("address", "is not an email address")
        const at = yield* now
        const subscriber = activeSubscriber(body.address, at)
        const active = activeSubscriptionsOf(subscriber.id).find((subscription) => subscription.subscriber_list_id === list.id)
        if (active === undefined) {
          const subscription = startSubscription(subscriber.id, list.id, body.frequency, "user_signed_up", at)
          return { id: subscription.id, subscription, outcome: "created" as const }
        }
        if (active.frequency === body.frequency) return { id: active.id, subscription: active, outcome: "found" as const }
        endSubscription(active, "frequency_changed", at)
        const subscription = startSubscription(subscriber.id, list.id, body.frequency, "frequency_changed", at)
        return { id: subscription.id, subscription, outcome: "found" as const }
      })

    const subscriptionWith = (id: string, { active }: { readonly active: boolean }) => {
      const subscription = subscriptions.get(id)
      return subscription === undefined || (active && subscription.ended_at !== null)
        ? Effect.fail(new SubscriptionNotFound({ error: "Could not find the subscription" }))
        : Effect.succeed(subscription)
    }

    const getSubscription = (id: string) =>
      Effect.map(subscriptionWith(id, { active: false }), (subscription) => ({
        subscription: new SubscriptionDetails({
          ...subscription,
          subscriber_list: lists.get(subscription.subscriber_list_id)!,
          subscriber: subscribers.get(subscription.subscriber_id)!
        })
      }))

    const changeSubscriptionFrequency = (id: string, frequency: Frequency) =>
      Effect.gen(function*() {
        const old = yield* subscriptionWith(id, { active: true })
        const at = yield* now
        endSubscription(old, "frequency_changed", at)
        return {
          subscription: startSubscription(old.subscriber_id, old.subscriber_list_id, frequency, "frequency_changed", at)
        }
      })

    const unsubscribe = (id: string) =>
      Effect.gen(function*() {
        const subscription = yield* subscriptionWith(id, { active: true })
        const at = yield* now
        endSubscription(subscription, "unsubscribed", at)
        if (activeSubscriptionsOf(subscription.subscriber_id).length === 0) {
          const subscriber = subscribers.get(subscription.subscriber_id)!
          subscribers.set(subscriber.id, new Subscriber({ ...subscriber, deactivated_at: at, updated_at: at }))
        }
      })

    const sendAuthToken = (address: string, destination: string, redirect: string | null | undefined) =>
      Effect.gen(function*() {
        const known = subscriberByAddress(address)
        if (known === undefined) return yield* new SubscriberNotFound({ error: "Could not find the subscriber" })
        const subscriber = activeSubscriber(known.address, yield* now)
        authTokens.push({ subscriberId: subscriber.id, destination, redirect: redirect ?? null })
        return { subscriber }
      })

    const sendSubscriptionAuthToken = (body: SubscriptionAuthTokenBody) =>
      Effect.map(getSubscriberList(body.topic_id), () => {
        subscriptionConfirmations.push(body)
        return {}
      })

    const healthcheck = Effect.sync(() => {
      const queueSize: HealthStatus = notifications.length >= QUEUE_WARNING_SIZE ? "warning" : "ok"
      return { checks: { queue_size: { status: queueSize }, queue_age: { status: "ok" as const } }, status: queueSize }
    })

    return {
      createSubscriberList,
      findSubscriberList,
      getSubscriberList,
      createNotification,
      getSubscriberSubscriptions,
      changeSubscriberAddress,
      deactivateSubscriber,
      createSubscription,
      getSubscription,
      changeSubscriptionFrequency,
      unsubscribe,
      sendAuthToken,
      healthcheck,
      notifications: Effect.sync(() => [...notifications]),
      sendSubscriptionAuthToken,
      authTokens: Effect.sync(() => [...authTokens]),
      subscriptionConfirmations: Effect.sync(() => [...subscriptionConfirmations]),
      listQueries: Effect.sync(() => [...listQueries]),
      subscriberWith
    }
  })
}) {}

const FakeAlertsHandlers = HttpApiBuilder.group(AlertsApi, "alerts", (handlers) =>
  Effect.gen(function*() {
    const fake = yield* FakeAlerts
    return handlers
      .handle("createSubscriberList", ({ payload }) => fake.createSubscriberList(payload))
      .handle("findSubscriberList", ({ urlParams }) => fake.findSubscriberList(urlParams))
      .handle("getSubscriberList", ({ path }) => fake.getSubscriberList(path.slug))
      .handle("createNotification", ({ payload }) => fake.createNotification("/notifications", payload))
      .handle("createContentChange", ({ payload }) => fake.createNotification("/content-changes", payload))
      .handle("getSubscriberSubscriptions", ({ path }) => fake.getSubscriberSubscriptions(path.id))
      .handle("changeSubscriberAddress", ({ path, payload }) => fake.changeSubscriberAddress(path.id, payload.new_address))
      .handle("deactivateSubscriber", ({ path }) => fake.deactivateSubscriber(path.id))
      .handle("createSubscription", ({ payload }) => fake.createSubscription(payload))
      .handle("getSubscription", ({ path }) => fake.getSubscription(path.id))
      .handle("changeSubscriptionFrequency", ({ path, payload }) => fake.changeSubscriptionFrequency(path.id, payload.frequency))
      .handle("unsubscribe", ({ path }) => fake.unsubscribe(path.id))
      .handle("sendAuthToken", ({ payload }) => fake.sendAuthToken(payload.address, payload.destination, payload.redirect))
      .handle("sendSubscriptionAuthToken", ({ payload }) => fake.sendSubscriptionAuthToken(payload))
  }))

const FakeAlertsHealthHandlers = HttpApiBuilder.group(AlertsApi, "alertsHealth", (handlers) =>
  Effect.map(FakeAlerts, (fake) => handlers.handle("healthcheck", () => fake.healthcheck)))

export { FAKE_TOKEN, FORBIDDEN_TOKEN } from "@civicstack/kit/testing"

/** The email alert contract served on 127.0.0.1 at a free port by in-memory handlers. */
export const FakeAlertsServer = servedOnLoopback(
  HttpApiBuilder.api(AlertsApi).pipe(
    Layer.provide(FakeAlertsHandlers),
    Layer.provide(FakeAlertsHealthHandlers),
    Layer.provide(fakeTokenAccess(AlertsAccess, "email-alert-api"))
  ),
  FakeAlerts.Default
)

/** The base URL of the running fake server. */
export const serverUrl = baseUrl
