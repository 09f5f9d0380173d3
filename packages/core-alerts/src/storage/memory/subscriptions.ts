import type { Context } from "effect"
import { now, StoreError } from "@civicstack/kit"
import { Duration, Effect, Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import { addressKey } from "../../domain/address"
import { byCodeUnit, criteriaDigest } from "../../domain/criteria"
import { listMatches } from "../../domain/matching"
import type { Notification, Subscriber, SubscriberList, Subscription } from "../../domain/records"
import { firstFreeSlug, slugify } from "../../domain/slug"
import { AddressTaken, AlertsStore, DuplicateContentChange } from "../AlertsStore"
import type { AllowanceUse, EndingReason, Subscribed } from "../AlertsStore"

type Store = Context.Tag.Service<AlertsStore>

/** The rows of a memory store, read by the memory email store (`emails.ts`) of the same process. */
export interface MemoryAlertsTables {
  readonly lists: ReadonlyMap<number, SubscriberList>
  readonly subscribers: ReadonlyMap<number, Subscriber>
  readonly subscriptions: ReadonlyMap<string, Subscription>
  readonly notifications: ReadonlyArray<Notification>
}

const tablesOfStores = new WeakMap<Store, MemoryAlertsTables>()

/** The tables behind a store made by `subscriptionsMemory`; none for any other store. */
export const memoryTablesOf = (store: Store): Option.Option<MemoryAlertsTables> =>
  Option.fromNullable(tablesOfStores.get(store))

/** Each operation reads the clock, then changes the maps synchronously: atomic, as the SQL adapter's statements are. */
const makeMemoryStore = (): Store => {
  const lists = new Map<number, SubscriberList>()
  const subscribers = new Map<number, Subscriber>()
  const subscriptions = new Map<string, Subscription>()
  const allowances = new Map<string, { readonly windowStart: Date; readonly used: number }>()
  const notifications: Array<Notification> = []
  let lastListId = 0
  let lastSubscriberId = 0

  const atNow = <A>(change: (at: Date) => A) => Effect.flatMap(now, (at) => Effect.sync(() => change(at)))
  const find = <A>(values: Iterable<A>, test: (value: A) => boolean) => Option.fromNullable([...values].find(test))

  const addressTaken = (address: string, exceptId: number) =>
    [...subscribers.values()].some((other) => other.id !== exceptId && addressKey(other.address) === addressKey(address))

  const activeSubscription = (subscriberId: number, subscriberListId: number) =>
    find(subscriptions.values(), (subscription) =>
      subscription.subscriberId === subscriberId && subscription.subscriberListId === subscriberListId &&
      subscription.endedAt === null)

  const end = (subscription: Subscription, reason: Subscription["endedReason"], at: Date) => {
    const ended = { ...subscription, endedAt: at, endedReason: reason, updatedAt: at }
    subscriptions.set(subscription.id, ended)
    return ended
  }

  const start = (fields: Pick<Subscription, "subscriberId" | "subscriberListId" | "frequency" | "source">, at: Date) => {
    const subscription: Subscription = {
      id: randomUUID(),
      subscriberId: fields.subscriberId,
      subscriberListId: fields.subscriberListId,
      frequency: fields.frequency,
      source: fields.source,
      endedAt: null,
      endedReason: null,
      ssoUserUid: null,
      createdAt: at,
      updatedAt: at
    }
    subscriptions.set(subscription.id, subscription)
    return subscription
  }

  /** Ends an active subscription and starts its replacement at the new frequency. */
  const replace = (subscription: Subscription, frequency: Subscription["frequency"], at: Date) => {
    end(subscription, "frequency_changed", at)
    const { subscriberId, subscriberListId } = subscription
    return start({ subscriberId, subscriberListId, frequency, source: "frequency_changed" }, at)
  }

  const hasActiveSubscription = (subscriberId: number) =>
    [...subscriptions.values()].some((subscription) =>
      subscription.subscriberId === subscriberId && subscription.endedAt === null
    )

  const deactivate = (subscriber: Subscriber, at: Date) => {
    const deactivated = { ...subscriber, deactivatedAt: at, updatedAt: at }
    subscribers.set(subscriber.id, deactivated)
    return deactivated
  }

  const modifySubscriber = (id: number, change: (subscriber: Subscriber, at: Date) => Subscriber) =>
    atNow((at) =>
      Option.map(Option.fromNullable(subscribers.get(id)), (subscriber) => {
        const changed = change(subscriber, at)
        subscribers.set(id, changed)
        return changed
      })
    )

  const withList = (subscription: Subscription) => ({ subscription, list: lists.get(subscription.subscriberListId)! })

  const store: Store = {
    transaction: (effect) => effect,

    findOrCreateList: ({ criteria, title }) =>
      atNow((at) => {
        const digest = criteriaDigest(criteria)
        const existing = [...lists.values()].find((list) => list.criteriaDigest === digest)
        if (existing !== undefined) {
          const list = existing.title === title ? existing : { ...existing, title, updatedAt: at }
          lists.set(list.id, list)
          return { list, created: false }
        }
        const slug = firstFreeSlug(slugify(title), new Set([...lists.values()].map((list) => list.slug)))
        const list: SubscriberList = {
          id: ++lastListId,
          title,
          slug,
          criteria,
          criteriaDigest: digest,
          createdAt: at,
          updatedAt: at
        }
        lists.set(list.id, list)
        return { list, created: true }
      }),
    listByCriteria: (criteria) =>
      Effect.sync(() => {
        const digest = criteriaDigest(criteria)
        return find(lists.values(), (list) => list.criteriaDigest === digest)
      }),
    listBySlug: (slug) => Effect.sync(() => find(lists.values(), (list) => list.slug === slug)),
    listById: (id) => Effect.sync(() => Option.fromNullable(lists.get(id))),
    listsWithCounts: Effect.sync(() =>
      [...lists.values()]
        .sort((a, b) => byCodeUnit(a.slug, b.slug))
        .map((list) => {
          const activeSubscriptions = { immediately: 0, daily: 0, weekly: 0 }
          for (const subscription of subscriptions.values()) {
            if (subscription.subscriberListId === list.id && subscription.endedAt === null) {
              activeSubscriptions[subscription.frequency]++
            }
          }
          return { list, activeSubscriptions }
        })
    ),

    subscriberById: (id) => Effect.sync(() => Option.fromNullable(subscribers.get(id))),
    subscriberByAddress: (address) =>
      Effect.sync(() => find(subscribers.values(), (subscriber) => addressKey(subscriber.address) === addressKey(address))),
    createSubscriber: (address) =>
      Effect.flatMap(now, (at) =>
        Effect.suspend(() => {
          if (addressTaken(address, -1)) return new AddressTaken({ address })
          const subscriber: Subscriber = {
            id: ++lastSubscriberId,
            address,
            ssoUserUid: null,
            deactivatedAt: null,
            createdAt: at,
            updatedAt: at
          }
          subscribers.set(subscriber.id, subscriber)
          return Effect.succeed(subscriber)
        })),
    changeAddress: (id, address) =>
      Effect.suspend(() =>
        subscribers.has(id) && addressTaken(address, id)
          ? new AddressTaken({ address })
          : modifySubscriber(id, (subscriber, at) => ({ ...subscriber, address, updatedAt: at }))
      ),
    deactivateSubscriber: (id, reason) =>
      atNow((at) => {
        const subscriber = subscribers.get(id)
        if (subscriber === undefined || subscriber.deactivatedAt !== null) return Option.none()
        for (const subscription of subscriptions.values()) {
          if (subscription.subscriberId === id && subscription.endedAt === null) end(subscription, reason, at)
        }
        return Option.some(deactivate(subscriber, at))
      }),
    // the memory store is for tests and scripts of one process: it does not keep concurrent transactions apart
    lockSubscriber: () => Effect.void,
    useAllowance: (key, limit, window) =>
      atNow((at): AllowanceUse => {
        const current = allowances.get(key)
        const renewed = current === undefined || current.windowStart.getTime() + Duration.toMillis(window) <= at.getTime()
        const allowance = renewed ? { windowStart: at, used: 0 } : current
        if (allowance.used >= limit) {
          return { granted: false, renewsAt: new Date(allowance.windowStart.getTime() + Duration.toMillis(window)) }
        }
        allowances.set(key, { ...allowance, used: allowance.used + 1 })
        return { granted: true }
      }),
    reactivateSubscriber: (id) =>
      modifySubscriber(id, (subscriber, at) =>
        subscriber.deactivatedAt === null ? subscriber : { ...subscriber, deactivatedAt: null, updatedAt: at }),

    subscribe: (input) =>
      Effect.flatMap(now, (at) =>
        Effect.suspend((): Effect.Effect<Subscribed, StoreError> => {
          if (!subscribers.has(input.subscriberId) || !lists.has(input.subscriberListId)) {
            return new StoreError({ message: "alerts store: subscribe failed: no such subscriber or list" })
          }
          const active = activeSubscription(input.subscriberId, input.subscriberListId)
          if (Option.isNone(active)) return Effect.succeed({ subscription: start(input, at), outcome: "created" })
          if (active.value.frequency === input.frequency) {
            return Effect.succeed({ subscription: active.value, outcome: "unchanged" })
          }
          return Effect.succeed({ subscription: replace(active.value, input.frequency, at), outcome: "frequency_changed" })
        })),
    changeFrequency: (id, frequency) =>
      atNow((at) => {
        const subscription = subscriptions.get(id)
        if (subscription === undefined || subscription.endedAt !== null) return Option.none()
        return Option.some(subscription.frequency === frequency ? subscription : replace(subscription, frequency, at))
      }),
    endSubscription: (id, reason: EndingReason) =>
      atNow((at) => {
        const subscription = subscriptions.get(id)
        if (subscription === undefined || subscription.endedAt !== null) return Option.none()
        const ended = end(subscription, reason, at)
        const subscriber = subscribers.get(subscription.subscriberId)!
        const deactivates = !hasActiveSubscription(subscriber.id) && subscriber.deactivatedAt === null
        if (deactivates) deactivate(subscriber, at)
        return Option.some({ subscription: ended, subscriberDeactivated: deactivates })
      }),
    activeSubscriptionsOf: (subscriberId) =>
      Effect.sync(() =>
        [...subscriptions.values()]
          .filter((subscription) => subscription.subscriberId === subscriberId && subscription.endedAt === null)
          .map(withList)
          .sort((a, b) => byCodeUnit(a.list.title, b.list.title) || byCodeUnit(a.subscription.id, b.subscription.id))
      ),
    activeSubscribersOf: (subscriberListId) =>
      Effect.sync(() =>
        [...subscriptions.values()]
          .filter((subscription) => subscription.subscriberListId === subscriberListId && subscription.endedAt === null)
          .map((subscription) => ({ subscriber: subscribers.get(subscription.subscriberId)!, subscription }))
          .sort((a, b) => a.subscriber.id - b.subscriber.id)
      ),
    subscriptionById: (id) =>
      Effect.sync(() =>
        Option.map(Option.fromNullable(subscriptions.get(id)), (subscription) => ({
          ...withList(subscription),
          subscriber: subscribers.get(subscription.subscriberId)!
        }))
      ),

    insertNotification: (notification) =>
      Effect.flatMap(now, (at) =>
        Effect.suspend(() => {
          const { basePath, contentId, publicUpdatedAt } = notification
          if (contentId !== null && basePath !== null && publicUpdatedAt !== null) {
            const seen = notifications.some((earlier) =>
              earlier.contentId === contentId && earlier.basePath === basePath &&
              earlier.publicUpdatedAt?.getTime() === publicUpdatedAt.getTime()
            )
            if (seen) return new DuplicateContentChange({ contentId, basePath, publicUpdatedAt })
          }
          const recorded: Notification = { ...notification, id: randomUUID(), createdAt: at }
          notifications.push(recorded)
          return Effect.succeed(recorded)
        })),
    matchingListIds: (notification) =>
      Effect.sync(() =>
        [...lists.values()]
          .filter((list) => listMatches(list.criteria, notification))
          .map((list) => list.id)
          .sort((a, b) => a - b)
      )
  }
  tablesOfStores.set(store, { lists, subscribers, subscriptions, notifications })
  return store
}

/** A store of its own in this process: for tests, scripts and embedding without a database. */
/** Lists, subscribers, subscriptions and notifications in this process. */
export const subscriptionsMemory: Layer.Layer<AlertsStore> = Layer.sync(AlertsStore, makeMemoryStore)
