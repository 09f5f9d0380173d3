import { describe, expect, it } from "@effect/vitest"
import type { Layer } from "effect"
import { Duration, Effect, Either, Option } from "effect"
import fc from "fast-check"
import type { CriterionValue } from "../../src/api/index"
import { keyedRecord } from "../../src/api/index"
import { normaliseAddress } from "../../src/domain/address"
import { normaliseListCriteria } from "../../src/domain/criteria"
import { listMatches } from "../../src/domain/matching"
import type { ListCriteriaInput } from "../../src/domain/criteria"
import type { NotificationFacts } from "../../src/domain/matching"
import type { NewNotification } from "../../src/domain/records"
import { AlertsStore } from "../../src/storage/AlertsStore"
import type { NewSubscription } from "../../src/storage/AlertsStore"
import { at, clockAt, start } from "../fixtures/records"
import { aNotification as taxNotification } from "../fixtures/records"

type Named<A> = Record<string, A>
type ListCriteriaOf = ReturnType<typeof normaliseListCriteria>

const criteria = (input: {
  readonly tags?: Named<CriterionValue>
  readonly links?: Named<CriterionValue>
} & Omit<ListCriteriaInput, "tags" | "links">) =>
  normaliseListCriteria({
    ...input,
    tags: keyedRecord(Object.entries(input.tags ?? {})),
    links: keyedRecord(Object.entries(input.links ?? {}))
  })

const address = (text: string) => Either.getOrThrow(normaliseAddress(text))

/** The fixtures' notification, with no tags unless given. */
const aNotification = (overrides: Partial<NewNotification> = {}): NewNotification =>
  taxNotification({ tags: new Map(), ...overrides })

const facts = (input: {
  readonly tags?: Named<ReadonlyArray<string>>
  readonly links?: Named<ReadonlyArray<string>>
  readonly documentType?: string
  readonly emailDocumentSupertype?: string
  readonly governmentDocumentSupertype?: string
  readonly contentId?: string
}): NotificationFacts => ({
  tags: new Map(Object.entries(input.tags ?? {})),
  links: new Map(Object.entries(input.links ?? {})),
  documentType: input.documentType ?? null,
  emailDocumentSupertype: input.emailDocumentSupertype ?? null,
  governmentDocumentSupertype: input.governmentDocumentSupertype ?? null,
  contentId: input.contentId ?? null
})

const newList = (title: string, listCriteria = criteria({ tags: { format: [title] } })) =>
  Effect.flatMap(AlertsStore, (store) => store.findOrCreateList({ title, criteria: listCriteria }))

/** A subscriber and a list, which subscriptions need. */
const subscriberAndList = Effect.gen(function*() {
  const store = yield* AlertsStore
  const subscriber = yield* store.createSubscriber(address("ada@example.com"))
  const { list } = yield* newList("Tax")
  return { store, subscriber, list }
})

const subscription = (subscriberId: number, subscriberListId: number, overrides: Partial<NewSubscription> = {}) =>
  ({ subscriberId, subscriberListId, frequency: "immediately", source: "user_signed_up", ...overrides }) as const

const someOf = <A>(items: ReadonlyArray<A>) => fc.subarray([...items], { minLength: 1 })
const criterionArbitrary = (values: ReadonlyArray<string>): fc.Arbitrary<CriterionValue> =>
  fc.oneof(someOf(values), someOf(values).map((any) => ({ any })), someOf(values).map((all) => ({ all })))
const namedArbitrary = <A>(names: ReadonlyArray<string>, value: fc.Arbitrary<A>) =>
  fc.uniqueArray(fc.tuple(fc.constantFrom(...names), value), { selector: ([name]) => name, maxLength: 2 })
const TAG_NAMES = ["format", "topics", "__proto__"]
const TAG_VALUES = ["a", "b", "c"]
const LINK_NAMES = ["taxon", "constructor"]
const LINK_VALUES = ["t1", "t2"]

/** Lists and notifications drawn from small alphabets, so that many of them meet. */
const randomListCriteria = fc.record({
  tags: namedArbitrary(TAG_NAMES, criterionArbitrary(TAG_VALUES)),
  links: fc.oneof(fc.constant([]), namedArbitrary(LINK_NAMES, criterionArbitrary(LINK_VALUES))),
  documentType: fc.constantFrom("", "guide"),
  emailDocumentSupertype: fc.constantFrom("", "publications"),
  governmentDocumentSupertype: fc.constantFrom("", "news"),
  contentId: fc.constantFrom(null, "c-1")
}).map(({ links, tags, ...fields }) =>
  normaliseListCriteria({ ...fields, tags: keyedRecord(tags), links: keyedRecord(links) })
)
const randomFacts = fc.record({
  tags: namedArbitrary(TAG_NAMES, fc.subarray(TAG_VALUES)),
  links: namedArbitrary(LINK_NAMES, fc.subarray(LINK_VALUES)),
  documentType: fc.constantFrom(null, "guide", "news"),
  emailDocumentSupertype: fc.constantFrom(null, "publications"),
  governmentDocumentSupertype: fc.constantFrom(null, "news"),
  contentId: fc.constantFrom(null, "c-1", "c-2")
}).map(({ links, tags, ...fields }): NotificationFacts => ({ ...fields, tags: new Map(tags), links: new Map(links) }))

/** The behaviour every adapter of `AlertsStore` shares: run against memory, PGlite and PostgreSQL. */
export const alertsStoreSuite = (name: string, backend: () => Layer.Layer<AlertsStore, unknown>) =>
  describe(`AlertsStore on ${name}`, () => {
    const test = (title: string, body: Effect.Effect<void, unknown, AlertsStore>) =>
      it.effect(title, () => Effect.provide(Effect.zipRight(clockAt(0), body), backend()))

    describe("subscriber lists", () => {
      test("creates a list with a slug from its title, and finds it by criteria, slug and id", Effect.gen(function*() {
        const store = yield* AlertsStore
        const listCriteria = criteria({ tags: { format: ["guide", "news"] }, documentType: "news_story" })
        const { created, list } = yield* store.findOrCreateList({ title: "Tax & VAT: news", criteria: listCriteria })
        expect(created).toBe(true)
        expect(list).toMatchObject({ title: "Tax & VAT: news", slug: "tax-vat-news", createdAt: start, updatedAt: start })
        expect(list.criteria).toEqual(listCriteria)

        const sameMeaning = criteria({ tags: { format: { any: ["news", "guide", "news"] } }, documentType: "news_story" })
        expect(yield* store.listByCriteria(sameMeaning)).toEqual(Option.some(list))
        expect(yield* store.listBySlug("tax-vat-news")).toEqual(Option.some(list))
        expect(yield* store.listById(list.id)).toEqual(Option.some(list))

        expect(yield* store.listByCriteria(criteria({ tags: { format: { all: ["guide", "news"] } } }))).toEqual(Option.none())
        expect(yield* store.listBySlug("tax")).toEqual(Option.none())
        expect(yield* store.listBySlug("bad\u0000slug")).toEqual(Option.none())
        expect(yield* store.listById(list.id + 1)).toEqual(Option.none())
        expect(yield* store.listById(-1)).toEqual(Option.none())
      }))

      test("finds the list of the same criteria instead of creating one, and gives it the new title", Effect.gen(function*() {
        const store = yield* AlertsStore
        const first = yield* store.findOrCreateList({ title: "Tax", criteria: criteria({ tags: { format: ["a", "b"] } }) })
        yield* clockAt(10)
        const again = yield* store.findOrCreateList({ title: "Tax", criteria: criteria({ tags: { format: { any: ["b", "a"] } } }) })
        expect(again).toEqual({ list: first.list, created: false })

        yield* clockAt(20)
        const renamed = yield* store.findOrCreateList({ title: "Taxes", criteria: criteria({ tags: { format: ["b", "a"] } }) })
        expect(renamed.created).toBe(false)
        expect(renamed.list).toEqual({ ...first.list, title: "Taxes", updatedAt: at(20) })
        expect(yield* store.listById(first.list.id)).toEqual(Option.some(renamed.list))
      }))

      test("gives lists of one title but other criteria the slugs -2, -3", Effect.gen(function*() {
        const store = yield* AlertsStore
        const slugs = []
        for (const format of ["a", "b", "c"]) {
          const { list } = yield* store.findOrCreateList({ title: "Tax news", criteria: criteria({ tags: { format: [format] } }) })
          slugs.push(list.slug)
        }
        expect(slugs).toEqual(["tax-news", "tax-news-2", "tax-news-3"])
        const { list } = yield* store.findOrCreateList({ title: "Tax news 2", criteria: criteria({ documentType: "x" }) })
        expect(list.slug).toBe("tax-news-2-2")
      }))

      test("keeps every criterion as given: hostile names, any and all, type fields, content_id", Effect.gen(function*() {
        const store = yield* AlertsStore
        const listCriteria = criteria({
          tags: { constructor: { all: ["x", "y"] }, toString: ["z"] },
          links: keyedRecord<CriterionValue>([["__proto__", ["t1"]], ["organisations", { any: ["o1"] }]]) as never,
          documentType: "guide",
          emailDocumentSupertype: "publications",
          governmentDocumentSupertype: "guidance",
          contentId: "1c5ab1e8-2f6a-4ae4-8b0c-0a1b2c3d4e5f"
        })
        const { list } = yield* store.findOrCreateList({ title: "Everything", criteria: listCriteria })
        expect(list.criteria).toEqual(listCriteria)
        expect([...list.criteria.links.keys()]).toEqual(["__proto__", "organisations"])
        expect(Option.map(yield* store.listById(list.id), (found) => found.criteria)).toEqual(Option.some(listCriteria))
        expect(Object.prototype).not.toHaveProperty("t1")
      }))

      test("tells lists apart by every criterion", Effect.gen(function*() {
        const store = yield* AlertsStore
        const variants = [
          criteria({ tags: { format: ["a"] } }),
          criteria({ tags: { format: { all: ["a"] } } }),
          criteria({ links: { format: ["a"] } }),
          criteria({ tags: { format: ["a"] }, documentType: "a" }),
          criteria({ tags: { format: ["a"] }, emailDocumentSupertype: "a" }),
          criteria({ tags: { format: ["a"] }, governmentDocumentSupertype: "a" }),
          criteria({ tags: { format: ["a"] }, contentId: "a" }),
          criteria({ contentId: "a" })
        ]
        const ids = new Set<number>()
        for (const variant of variants) {
          const { created, list } = yield* store.findOrCreateList({ title: "Same title", criteria: variant })
          expect(created).toBe(true)
          ids.add(list.id)
        }
        expect(ids.size).toBe(variants.length)
      }))
    })

    describe("subscribers", () => {
      test("creates subscribers and finds them by id, and by address in any case", Effect.gen(function*() {
        const store = yield* AlertsStore
        const ada = yield* store.createSubscriber(address("Ada@Example.com"))
        expect(ada).toMatchObject({
          address: "Ada@example.com",
          ssoUserUid: null,
          deactivatedAt: null,
          createdAt: start,
          updatedAt: start
        })
        const grace = yield* store.createSubscriber(address("grace@example.com"))
        expect(grace.id).not.toBe(ada.id)
        expect(yield* store.subscriberById(ada.id)).toEqual(Option.some(ada))
        expect(yield* store.subscriberByAddress("ADA@EXAMPLE.COM")).toEqual(Option.some(ada))
        expect(yield* store.subscriberByAddress("ada@example.com")).toEqual(Option.some(ada))
        expect(yield* store.subscriberByAddress("ada@example.org")).toEqual(Option.none())
        expect(yield* store.subscriberByAddress("ada\u0000@example.com")).toEqual(Option.none())
        expect(yield* store.subscriberById(grace.id + 1)).toEqual(Option.none())
      }))

      test("refuses a second subscriber whose address differs only in case", Effect.gen(function*() {
        const store = yield* AlertsStore
        yield* store.createSubscriber(address("ada@example.com"))
        const refused = yield* Effect.flip(store.createSubscriber(address("ADA@example.com")))
        expect(refused).toMatchObject({ _tag: "AddressTaken", address: "ADA@example.com" })
        expect(yield* store.subscriberByAddress("ADA@example.com")).toMatchObject(
          Option.some({ address: "ada@example.com" })
        )
      }))

      test("changes an address, refusing one another subscriber has in any case", Effect.gen(function*() {
        const store = yield* AlertsStore
        const ada = yield* store.createSubscriber(address("ada@example.com"))
        const grace = yield* store.createSubscriber(address("grace@example.com"))
        yield* clockAt(5)
        const changed = yield* store.changeAddress(ada.id, address("ada.lovelace@example.com"))
        expect(changed).toEqual(Option.some({ ...ada, address: "ada.lovelace@example.com", updatedAt: at(5) }))
        expect(yield* store.subscriberByAddress("ada@example.com")).toEqual(Option.none())

        const taken = yield* Effect.flip(store.changeAddress(ada.id, address("GRACE@example.com")))
        expect(taken).toMatchObject({ _tag: "AddressTaken" })
        expect(yield* store.subscriberById(grace.id)).toEqual(Option.some(grace))

        const recased = yield* store.changeAddress(ada.id, address("Ada.Lovelace@example.com"))
        expect(Option.map(recased, (subscriber) => subscriber.address)).toEqual(Option.some("Ada.Lovelace@example.com"))
        expect(yield* store.changeAddress(grace.id + 100, address("new@example.com"))).toEqual(Option.none())
        expect(yield* store.changeAddress(grace.id + 100, address("grace@example.com"))).toEqual(Option.none())
      }))

      test("deactivates a subscriber and ends its active subscriptions; a second time does nothing", Effect.gen(function*() {
        const { list, store, subscriber } = yield* subscriberAndList
        const { list: other } = yield* newList("Other")
        const grace = yield* store.createSubscriber(address("grace@example.com"))
        const first = yield* store.subscribe(subscription(subscriber.id, list.id))
        const second = yield* store.subscribe(subscription(subscriber.id, other.id, { frequency: "daily" }))
        const graces = yield* store.subscribe(subscription(grace.id, list.id))

        yield* clockAt(30)
        const deactivated = yield* store.deactivateSubscriber(subscriber.id, "unsubscribed")
        expect(deactivated).toEqual(Option.some({ ...subscriber, deactivatedAt: at(30), updatedAt: at(30) }))
        for (const { subscription: ended } of [first, second]) {
          expect(Option.map(yield* store.subscriptionById(ended.id), (found) => found.subscription)).toEqual(
            Option.some({ ...ended, endedAt: at(30), endedReason: "unsubscribed", updatedAt: at(30) })
          )
        }
        expect(yield* store.activeSubscriptionsOf(subscriber.id)).toEqual([])
        expect((yield* store.activeSubscriptionsOf(grace.id)).map((found) => found.subscription)).toEqual([graces.subscription])

        yield* clockAt(40)
        expect(yield* store.deactivateSubscriber(subscriber.id, "unsubscribed")).toEqual(Option.none())
        expect(Option.map(yield* store.subscriberById(subscriber.id), (found) => found.deactivatedAt)).toEqual(Option.some(at(30)))
        expect(yield* store.deactivateSubscriber(grace.id + 100, "unsubscribed")).toEqual(Option.none())
      }))

      test("reactivates a deactivated subscriber", Effect.gen(function*() {
        const store = yield* AlertsStore
        const ada = yield* store.createSubscriber(address("ada@example.com"))
        yield* clockAt(10)
        expect(yield* store.reactivateSubscriber(ada.id)).toEqual(Option.some(ada))
        yield* store.deactivateSubscriber(ada.id, "non_existent_email")
        yield* clockAt(20)
        expect(yield* store.reactivateSubscriber(ada.id)).toEqual(Option.some({ ...ada, deactivatedAt: null, updatedAt: at(20) }))
        expect(yield* store.reactivateSubscriber(ada.id + 1)).toEqual(Option.none())
      }))
    })

    describe("allowances", () => {
      test("grants `limit` uses per window from its first use, counts no refused one, and starts anew after it", Effect.gen(function*() {
        const store = yield* AlertsStore
        const window = Duration.seconds(60)
        const use = (key: string) => store.useAllowance(key, 2, window)
        yield* clockAt(10)
        expect(yield* use("caller-a")).toEqual({ granted: true })
        yield* clockAt(30)
        expect(yield* use("caller-a")).toEqual({ granted: true })
        expect(yield* use("caller-a")).toEqual({ granted: false, renewsAt: at(70) })
        expect(yield* use("caller-b")).toEqual({ granted: true })
        yield* clockAt(69)
        expect(yield* use("caller-a")).toEqual({ granted: false, renewsAt: at(70) })
        yield* clockAt(70)
        expect(yield* use("caller-a")).toEqual({ granted: true })
        expect(yield* use("caller-a")).toEqual({ granted: true })
        expect(yield* use("caller-a")).toEqual({ granted: false, renewsAt: at(130) })
      }))

      test("grants no more than `limit` of many uses at once", Effect.gen(function*() {
        const store = yield* AlertsStore
        const uses = yield* Effect.all(
          Array.from({ length: 12 }, () => store.useAllowance("busy-caller", 3, Duration.hours(1))),
          { concurrency: "unbounded" }
        )
        expect(uses.filter((use) => use.granted)).toHaveLength(3)
      }))
    })

    describe("subscriptions", () => {
      test("subscribes once per subscriber and list: created, then unchanged at the same frequency", Effect.gen(function*() {
        const { list, store, subscriber } = yield* subscriberAndList
        const created = yield* store.subscribe(subscription(subscriber.id, list.id))
        expect(created.outcome).toBe("created")
        expect(created.subscription).toEqual({
          id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/),
          subscriberId: subscriber.id,
          subscriberListId: list.id,
          frequency: "immediately",
          source: "user_signed_up",
          endedAt: null,
          endedReason: null,
          ssoUserUid: null,
          createdAt: start,
          updatedAt: start
        })
        yield* clockAt(10)
        const again = yield* store.subscribe(subscription(subscriber.id, list.id, { source: "imported" }))
        expect(again).toEqual({ subscription: created.subscription, outcome: "unchanged" })
        expect((yield* store.activeSubscriptionsOf(subscriber.id)).length).toBe(1)
      }))

      test("a subscription at another frequency ends the active one and replaces it", Effect.gen(function*() {
        const { list, store, subscriber } = yield* subscriberAndList
        const { subscription: daily } = yield* store.subscribe(subscription(subscriber.id, list.id, { frequency: "daily" }))
        yield* clockAt(10)
        const weekly = yield* store.subscribe(subscription(subscriber.id, list.id, { frequency: "weekly" }))
        expect(weekly.outcome).toBe("frequency_changed")
        expect(weekly.subscription).toMatchObject({
          frequency: "weekly",
          source: "frequency_changed",
          endedAt: null,
          createdAt: at(10)
        })
        expect(weekly.subscription.id).not.toBe(daily.id)
        expect(Option.map(yield* store.subscriptionById(daily.id), (found) => found.subscription)).toEqual(
          Option.some({ ...daily, endedAt: at(10), endedReason: "frequency_changed", updatedAt: at(10) })
        )
        expect((yield* store.activeSubscriptionsOf(subscriber.id)).map((found) => found.subscription)).toEqual([
          weekly.subscription
        ])
      }))

      test("changes the frequency of an active subscription only", Effect.gen(function*() {
        const { list, store, subscriber } = yield* subscriberAndList
        const { subscription: immediate } = yield* store.subscribe(subscription(subscriber.id, list.id))
        yield* clockAt(10)
        expect(yield* store.changeFrequency(immediate.id, "immediately")).toEqual(Option.some(immediate))

        const daily = Option.getOrThrow(yield* store.changeFrequency(immediate.id, "daily"))
        expect(daily).toMatchObject({
          subscriberId: subscriber.id,
          subscriberListId: list.id,
          frequency: "daily",
          source: "frequency_changed",
          endedAt: null,
          createdAt: at(10)
        })
        expect(Option.map(yield* store.subscriptionById(immediate.id), (found) => found.subscription.endedReason))
          .toEqual(Option.some("frequency_changed"))
        expect(yield* store.changeFrequency(immediate.id, "weekly")).toEqual(Option.none())
        expect(yield* store.changeFrequency("5c3e9f5e-0000-4000-8000-000000000000", "weekly")).toEqual(Option.none())
        expect(yield* store.changeFrequency("not-a-uuid", "weekly")).toEqual(Option.none())
        expect((yield* store.activeSubscriptionsOf(subscriber.id)).map((found) => found.subscription)).toEqual([daily])
      }))

      test("ends a subscription with its reason, and deactivates the subscriber once none is active", Effect.gen(function*() {
        const { list, store, subscriber } = yield* subscriberAndList
        const { list: other } = yield* newList("Other")
        const { subscription: first } = yield* store.subscribe(subscription(subscriber.id, list.id))
        const { subscription: second } = yield* store.subscribe(subscription(subscriber.id, other.id))

        yield* clockAt(10)
        expect(yield* store.endSubscription(first.id, "unsubscribed")).toEqual(Option.some({
          subscription: { ...first, endedAt: at(10), endedReason: "unsubscribed", updatedAt: at(10) },
          subscriberDeactivated: false
        }))
        expect(Option.map(yield* store.subscriberById(subscriber.id), (found) => found.deactivatedAt)).toEqual(Option.some(null))

        yield* clockAt(20)
        const last = yield* store.endSubscription(second.id, "unsubscribed")
        expect(Option.map(last, (ended) => ended.subscriberDeactivated)).toEqual(Option.some(true))
        expect(yield* store.subscriberById(subscriber.id)).toEqual(
          Option.some({ ...subscriber, deactivatedAt: at(20), updatedAt: at(20) })
        )

        expect(yield* store.endSubscription(second.id, "unsubscribed")).toEqual(Option.none())
        expect(yield* store.endSubscription("5c3e9f5e-0000-4000-8000-000000000000", "unsubscribed")).toEqual(Option.none())
        expect(yield* store.endSubscription("nope", "unsubscribed")).toEqual(Option.none())
      }))

      test("subscribing again after unsubscribing starts a new subscription", Effect.gen(function*() {
        const { list, store, subscriber } = yield* subscriberAndList
        const { subscription: first } = yield* store.subscribe(subscription(subscriber.id, list.id))
        yield* store.endSubscription(first.id, "unsubscribed")
        yield* clockAt(10)
        const again = yield* store.subscribe(subscription(subscriber.id, list.id))
        expect(again.outcome).toBe("created")
        expect(again.subscription.id).not.toBe(first.id)
      }))

      test("lists a subscriber's active subscriptions by list title, each with its list", Effect.gen(function*() {
        const store = yield* AlertsStore
        const ada = yield* store.createSubscriber(address("ada@example.com"))
        const grace = yield* store.createSubscriber(address("grace@example.com"))
        const { list: zebra } = yield* newList("Zebra crossings")
        const { list: apple } = yield* newList("Apple orchards")
        const { list: lower } = yield* newList("allotments")
        const { list: ended } = yield* newList("Bees")
        for (const list of [zebra, apple, lower, ended]) yield* store.subscribe(subscription(ada.id, list.id))
        yield* store.subscribe(subscription(grace.id, zebra.id))
        const [endedOne] = (yield* store.activeSubscriptionsOf(ada.id)).filter((found) => found.list.id === ended.id)
        yield* store.endSubscription(endedOne!.subscription.id, "unsubscribed")

        const active = yield* store.activeSubscriptionsOf(ada.id)
        expect(active.map((found) => found.list)).toEqual([apple, zebra, lower])
        expect(active.every((found) => found.subscription.subscriberListId === found.list.id)).toBe(true)
        expect(active.every((found) => found.subscription.subscriberId === ada.id)).toBe(true)
        expect(yield* store.activeSubscriptionsOf(grace.id + 100)).toEqual([])
      }))

      test("finds any subscription by id with its list and subscriber", Effect.gen(function*() {
        const { list, store, subscriber } = yield* subscriberAndList
        const { subscription: created } = yield* store.subscribe(subscription(subscriber.id, list.id))
        expect(yield* store.subscriptionById(created.id)).toEqual(Option.some({ subscription: created, list, subscriber }))
        yield* clockAt(5)
        yield* store.endSubscription(created.id, "unsubscribed")
        const ended = Option.getOrThrow(yield* store.subscriptionById(created.id))
        expect(ended.subscription.endedReason).toBe("unsubscribed")
        expect(ended.subscriber.deactivatedAt).toEqual(at(5))
        expect(yield* store.subscriptionById("5c3e9f5e-0000-4000-8000-000000000000")).toEqual(Option.none())
        expect(yield* store.subscriptionById("bad\u0000id")).toEqual(Option.none())
      }))

      test("refuses a subscription of an unknown subscriber or to an unknown list", Effect.gen(function*() {
        const { list, store, subscriber } = yield* subscriberAndList
        const unknownSubscriber = yield* Effect.flip(store.subscribe(subscription(subscriber.id + 100, list.id)))
        expect(unknownSubscriber._tag).toBe("StoreError")
        const unknownList = yield* Effect.flip(store.subscribe(subscription(subscriber.id, list.id + 100)))
        expect(unknownList._tag).toBe("StoreError")
        expect(yield* store.activeSubscriptionsOf(subscriber.id)).toEqual([])
      }))

      test("counts each list's active subscriptions by frequency, lists by slug", Effect.gen(function*() {
        const store = yield* AlertsStore
        const none = { immediately: 0, daily: 0, weekly: 0 }
        expect(yield* store.listsWithCounts).toEqual([])
        const { list: vat } = yield* newList("VAT")
        const { list: empty } = yield* newList("Empty")
        const { list: tax } = yield* newList("Tax")
        const subscribers = yield* Effect.forEach(["a", "b", "c", "d"], (name) =>
          store.createSubscriber(address(`${name}@example.com`)))
        const [a, b, c, d] = subscribers.map((subscriber) => subscriber.id) as [number, number, number, number]
        yield* store.subscribe(subscription(a, tax.id))
        yield* store.subscribe(subscription(b, tax.id))
        yield* store.subscribe(subscription(c, tax.id, { frequency: "daily" }))
        yield* store.subscribe(subscription(d, tax.id, { frequency: "weekly" }))
        yield* store.subscribe(subscription(a, vat.id, { frequency: "weekly" }))
        // replaced, ended and deactivated subscriptions do not count
        yield* store.subscribe(subscription(b, tax.id, { frequency: "daily" }))
        const ended = yield* store.subscribe(subscription(b, vat.id))
        yield* store.endSubscription(ended.subscription.id, "unsubscribed")
        yield* store.deactivateSubscriber(d, "unsubscribed")

        expect(yield* store.listsWithCounts).toEqual([
          { list: empty, activeSubscriptions: none },
          { list: tax, activeSubscriptions: { immediately: 1, daily: 2, weekly: 0 } },
          { list: vat, activeSubscriptions: { ...none, weekly: 1 } }
        ])
      }))

      test("gives a list's active subscriptions with their subscribers, by subscriber id", Effect.gen(function*() {
        const { list, store, subscriber: ada } = yield* subscriberAndList
        const { list: other } = yield* newList("Other")
        const bob = yield* store.createSubscriber(address("Bob@Example.com"))
        const cy = yield* store.createSubscriber(address("cy@example.com"))
        yield* clockAt(5)
        const bobs = yield* store.subscribe(subscription(bob.id, list.id, { frequency: "weekly" }))
        const adas = yield* store.subscribe(subscription(ada.id, list.id))
        yield* store.subscribe(subscription(cy.id, other.id))
        const cys = yield* store.subscribe(subscription(cy.id, list.id))
        yield* store.endSubscription(cys.subscription.id, "unsubscribed")

        expect(yield* store.activeSubscribersOf(list.id)).toEqual([
          { subscriber: ada, subscription: adas.subscription },
          { subscriber: bob, subscription: bobs.subscription }
        ])
        expect((yield* store.activeSubscribersOf(other.id)).map((entry) => entry.subscriber.address)).toEqual(["cy@example.com"])
        expect(yield* store.activeSubscribersOf(other.id + 100)).toEqual([])
        expect(yield* store.activeSubscribersOf(-1)).toEqual([])
      }))
    })

    describe("notifications", () => {
      test("records a notification with an id and the time", Effect.gen(function*() {
        const store = yield* AlertsStore
        const notification = aNotification({
          tags: new Map([["__proto__", ["x"]], ["format", ["guide"]]]),
          links: new Map([["constructor", ["t1"]]]),
          contentId: "c-1",
          publicUpdatedAt: at(-60)
        })
        const recorded = yield* store.insertNotification(notification)
        expect(recorded).toEqual({ ...notification, id: expect.any(String), createdAt: start })
        const second = yield* store.insertNotification(notification)
        expect(second.id).not.toBe(recorded.id)
      }))

      test("refuses a content change received before: same content_id, base_path and public_updated_at", Effect.gen(function*() {
        const store = yield* AlertsStore
        const change = { contentId: "c-1", basePath: "/tax", publicUpdatedAt: new Date("2018-03-01T09:00:00.000Z") }
        yield* store.insertNotification(aNotification(change))
        const duplicate = yield* Effect.flip(
          store.insertNotification(aNotification({ ...change, subject: "Other", publicUpdatedAt: new Date("2018-03-01T09:00:00Z") }))
        )
        expect(duplicate).toMatchObject({ _tag: "DuplicateContentChange", ...change })

        yield* store.insertNotification(aNotification({ ...change, contentId: "c-2" }))
        yield* store.insertNotification(aNotification({ ...change, basePath: "/vat" }))
        yield* store.insertNotification(aNotification({ ...change, publicUpdatedAt: at(1) }))
        for (const missing of ["contentId", "basePath", "publicUpdatedAt"] as const) {
          const partial = aNotification({ ...change, [missing]: null })
          yield* store.insertNotification(partial)
          yield* store.insertNotification(partial)
        }
      }))
    })

    describe("at the same time", () => {
      test("one list is created for criteria asked for together, and other lists of the title get their own slugs", Effect.gen(function*() {
        const store = yield* AlertsStore
        const same = yield* Effect.all(
          Array.from({ length: 6 }, () => store.findOrCreateList({ title: "Tax", criteria: criteria({ tags: { format: ["a"] } }) })),
          { concurrency: "unbounded" }
        )
        expect(new Set(same.map(({ list }) => list.id)).size).toBe(1)
        expect(same.filter(({ created }) => created).length).toBe(1)

        const others = yield* Effect.all(
          ["b", "c", "d", "e"].map((format) =>
            store.findOrCreateList({ title: "Tax", criteria: criteria({ tags: { format: [format] } }) })
          ),
          { concurrency: "unbounded" }
        )
        expect(others.map(({ list }) => list.slug).sort()).toEqual(["tax-2", "tax-3", "tax-4", "tax-5"])
      }))

      test("subscriptions asked for together leave one active per subscriber and list", Effect.gen(function*() {
        const { list, store, subscriber } = yield* subscriberAndList
        const frequencies = ["immediately", "daily", "weekly", "daily", "immediately", "weekly"] as const
        yield* Effect.all(
          frequencies.map((frequency) => store.subscribe(subscription(subscriber.id, list.id, { frequency }))),
          { concurrency: "unbounded" }
        )
        expect((yield* store.activeSubscriptionsOf(subscriber.id)).length).toBe(1)
      }))

      test("ending a subscriber's last two subscriptions together deactivates the subscriber", Effect.gen(function*() {
        const store = yield* AlertsStore
        const { list } = yield* newList("Tax")
        const { list: other } = yield* newList("Other")
        const subscribers = yield* Effect.forEach(
          Array.from({ length: 8 }, (_, index) => address(`subscriber-${index}@example.com`)),
          store.createSubscriber
        )
        const subscriptions = yield* Effect.forEach(subscribers, (subscriber) =>
          Effect.forEach([list, other], (each) =>
            Effect.map(store.subscribe(subscription(subscriber.id, each.id)), (subscribed) => subscribed.subscription)))
        const ended = yield* Effect.all(
          subscriptions.flat().map((each) => store.endSubscription(each.id, "unsubscribed")),
          { concurrency: "unbounded" }
        )
        expect(ended.filter((result) => Option.isSome(result) && result.value.subscriberDeactivated).length).toBe(8)
        for (const subscriber of subscribers) {
          expect(Option.map(yield* store.subscriberById(subscriber.id), (found) => found.deactivatedAt)).toEqual(Option.some(start))
        }
      }))

      test("frequency changes and unsubscribes of one subscription together neither fail nor leave two active", Effect.gen(function*() {
        const store = yield* AlertsStore
        const { list } = yield* newList("Tax")
        const subscribers = yield* Effect.forEach(
          Array.from({ length: 8 }, (_, index) => address(`subscriber-${index}@example.com`)),
          store.createSubscriber
        )
        const subscriptions = yield* Effect.forEach(subscribers, (subscriber) =>
          Effect.map(store.subscribe(subscription(subscriber.id, list.id)), (subscribed) => subscribed.subscription))
        yield* Effect.all(
          subscriptions.flatMap((each) => [
            Effect.asVoid(store.changeFrequency(each.id, "daily")),
            Effect.asVoid(store.endSubscription(each.id, "unsubscribed"))
          ]),
          { concurrency: "unbounded" }
        )
        for (const subscriber of subscribers) {
          expect((yield* store.activeSubscriptionsOf(subscriber.id)).length).toBeLessThanOrEqual(1)
        }
      }))

      test("a content change sent twice together is recorded once", Effect.gen(function*() {
        const store = yield* AlertsStore
        const change = aNotification({ contentId: "c-1", basePath: "/tax", publicUpdatedAt: at(-60) })
        const results = yield* Effect.all(
          Array.from({ length: 4 }, () => Effect.either(store.insertNotification(change))),
          { concurrency: "unbounded" }
        )
        expect(results.filter(Either.isRight).length).toBe(1)
        expect(results.filter(Either.isLeft).map((result) => result.left._tag)).toEqual(Array(3).fill("DuplicateContentChange"))
      }))
    })

    describe("matching notifications to lists", () => {
      test("finds the lists whose criteria a notification meets", Effect.gen(function*() {
        const store = yield* AlertsStore
        const id = (title: string, input: Parameters<typeof criteria>[0]) =>
          Effect.map(store.findOrCreateList({ title, criteria: criteria(input) }), ({ list }) => list.id)
        const anyFormat = yield* id("any format", { tags: { format: ["guide", "news"] } })
        const allTopics = yield* id("all topics", { tags: { topics: { all: ["tax", "vat"] } } })
        const twoTags = yield* id("two tags", { tags: { format: ["guide"], topics: { any: ["tax"] } } })
        const guides = yield* id("guides", { documentType: "guide" })
        const typedTags = yield* id("typed tags", { documentType: "guide", emailDocumentSupertype: "publications", tags: { format: ["guide"] } })
        const linked = yield* id("linked", { links: { taxon: { all: ["t1", "t2"] } } })
        const linksOverTags = yield* id("links over tags", { tags: { format: ["nothing"] }, links: { organisations: ["o1"] } })
        const content = yield* id("content", { contentId: "c-1" })
        const government = yield* id("government", { governmentDocumentSupertype: "news-stories" })
        const hostile = yield* id("hostile", { tags: keyedRecord<CriterionValue>([["__proto__", ["p"]]]) as never })
        yield* id("nothing", {})

        const matching = (notification: Parameters<typeof facts>[0]) => store.matchingListIds(facts(notification))

        expect(yield* matching({ tags: { format: ["news"] } })).toEqual([anyFormat])
        expect(yield* matching({ tags: { format: ["guide"], topics: ["tax", "vat"] } })).toEqual([anyFormat, allTopics, twoTags])
        expect(yield* matching({ tags: { topics: ["tax"] } })).toEqual([])
        expect(yield* matching({ documentType: "guide", tags: { format: ["guide"] } })).toEqual([anyFormat, guides])
        expect(yield* matching({ documentType: "guide", emailDocumentSupertype: "publications", tags: { format: ["guide"] } }))
          .toEqual([anyFormat, guides, typedTags])
        expect(yield* matching({ links: { taxon: ["t2", "t1", "t3"] } })).toEqual([linked])
        expect(yield* matching({ links: { taxon: ["t1"] } })).toEqual([])
        expect(yield* matching({ tags: { taxon: ["t1", "t2"] } })).toEqual([])
        expect(yield* matching({ links: { organisations: ["o1"] } })).toEqual([linksOverTags])
        expect(yield* matching({ tags: { format: ["nothing"] } })).toEqual([])
        expect(yield* matching({ contentId: "c-1" })).toEqual([content])
        expect(yield* matching({ contentId: "c-2" })).toEqual([])
        expect(yield* matching({ governmentDocumentSupertype: "news-stories" })).toEqual([government])
        expect(yield* store.matchingListIds({ ...facts({}), tags: new Map([["__proto__", ["p"]]]) })).toEqual([hostile])
        expect(yield* matching({})).toEqual([])
      }))

      test("agrees with listMatches for many lists and notifications", Effect.gen(function*() {
        const store = yield* AlertsStore
        const lists = new Map<number, ListCriteriaOf>()
        for (const [index, listCriteria] of fc.sample(randomListCriteria, { seed: 20241125, numRuns: 40 }).entries()) {
          const { list } = yield* store.findOrCreateList({ title: `List ${index}`, criteria: listCriteria })
          lists.set(list.id, list.criteria)
        }
        let matched = 0
        for (const notification of fc.sample(randomFacts, { seed: 7, numRuns: 60 })) {
          const expected = [...lists].filter(([, listCriteria]) => listMatches(listCriteria, notification)).map(([id]) => id)
          matched += expected.length
          expect(yield* store.matchingListIds(notification)).toEqual(expected.sort((a, b) => a - b))
        }
        // the samples are of use only if they do meet
        expect(matched).toBeGreaterThan(20)
      }))
    })
  })
