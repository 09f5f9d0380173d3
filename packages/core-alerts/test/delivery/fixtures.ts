import { Effect, Either, TestClock } from "effect"
import { keyedRecord } from "../../src/api/index"
import { normaliseAddress } from "../../src/domain/address"
import { normaliseListCriteria } from "../../src/domain/criteria"
import type { Frequency, NewNotification } from "../../src/domain/records"
import { AlertsStore } from "../../src/storage/AlertsStore"

export const start = new Date("2024-03-01T12:00:00.000Z")
export const at = (seconds: number) => new Date(start.getTime() + seconds * 1000)
/** Moves the test clock to `seconds` after the start. */
export const clockAt = (seconds: number) => TestClock.setTime(at(seconds).getTime())

export const aNotification = (overrides: Partial<NewNotification> = {}): NewNotification => ({
  subject: "Tax changes",
  body: "Rates change in April.",
  title: null,
  description: null,
  changeNote: null,
  tags: new Map([["topics", ["tax"]]]),
  links: new Map(),
  documentType: null,
  emailDocumentSupertype: null,
  governmentDocumentSupertype: null,
  contentId: null,
  basePath: null,
  publicUpdatedAt: null,
  publishingApp: null,
  fromAddressId: null,
  urgent: false,
  priority: "normal",
  header: null,
  footer: null,
  footnote: null,
  ...overrides
})

/** A list matching notifications tagged with any of `topics`. */
export const topicList = (title: string, ...topics: ReadonlyArray<string>) =>
  Effect.flatMap(AlertsStore, (store) =>
    store.findOrCreateList({
      title,
      criteria: normaliseListCriteria({ tags: keyedRecord([["topics", topics]]), links: keyedRecord([]) })
    })).pipe(Effect.map(({ list }) => list))

export const subscriberTo = (
  addressText: string,
  listIds: ReadonlyArray<number>,
  frequency: Frequency = "immediately"
) =>
  Effect.gen(function*() {
    const store = yield* AlertsStore
    const subscriber = yield* store.createSubscriber(Either.getOrThrow(normaliseAddress(addressText)))
    const subscriptions = yield* Effect.forEach(listIds, (subscriberListId) =>
      Effect.map(
        store.subscribe({ subscriberId: subscriber.id, subscriberListId, frequency, source: "user_signed_up" }),
        ({ subscription }) => subscription
      ))
    return { subscriber, subscriptions }
  })
