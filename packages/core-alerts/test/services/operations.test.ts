import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Option, Redacted, TestClock } from "effect"
import { keyedRecord } from "../../src/api/index"
import { EmailProvider, PermanentDeliveryFailure } from "../../src/services/EmailProvider"
import type { DeliveryFailure, OutgoingEmail } from "../../src/services/EmailProvider"
import { fanOutJob } from "../../src/domain/jobs"
import { normaliseListCriteria } from "../../src/domain/criteria"
import { layerMemory } from "../../src/layers"
import { Alerts } from "../../src/services/Alerts"
import { AlertsOperations, sendTestEmail, TEST_EMAIL_SUBJECT } from "../../src/services/AlertsOperations"
import { AlertsParts } from "../../src/services/AlertsParts"

const service = layerMemory({
  authTokenSecret: Redacted.make("o".repeat(40)),
  healthThresholds: {
    queueSize: { warning: 2, critical: 100 },
    queueAge: { warning: Duration.minutes(1), critical: Duration.hours(1) }
  }
})

const topicList = (title: string, topic: string) =>
  Effect.flatMap(Alerts, (alerts) =>
    alerts.findOrCreateList({
      title,
      criteria: normaliseListCriteria({ tags: keyedRecord([["topics", [topic]]]), links: keyedRecord([]) })
    })).pipe(Effect.map((found) => found.value))

describe("AlertsOperations", () => {
  it.effect("lists every list with its active subscribers by frequency, and a list's subscribers by slug", () =>
    Effect.gen(function*() {
      const alerts = yield* Alerts
      const operations = yield* AlertsOperations
      const tax = yield* topicList("Tax", "tax")
      const vat = yield* topicList("VAT", "vat")
      const ada = yield* alerts.subscribe({ address: "ada@example.com", subscriberListId: tax.id, frequency: "daily" })
      yield* alerts.subscribe({ address: "bob@example.com", subscriberListId: tax.id, frequency: "immediately" })
      yield* alerts.subscribe({ address: "ada@example.com", subscriberListId: vat.id, frequency: "weekly" })

      expect((yield* operations.lists).map(({ activeSubscriptions, list }) => [list.slug, activeSubscriptions])).toEqual([
        ["tax", { immediately: 1, daily: 1, weekly: 0 }],
        ["vat", { immediately: 0, daily: 0, weekly: 1 }]
      ])
      const subscribers = yield* operations.subscribersOf("tax")
      expect(subscribers.list).toEqual(tax)
      expect(subscribers.subscribers.map((entry) => [entry.subscriber.address, entry.subscription.frequency])).toEqual([
        ["ada@example.com", "daily"],
        ["bob@example.com", "immediately"]
      ])
      expect(subscribers.subscribers[0]!.subscription.id).toBe(ada.value.id)
      const unknown = yield* Effect.flip(operations.subscribersOf("no-such-list"))
      expect(unknown._tag).toBe("SubscriberListNotFound")
    }).pipe(Effect.provide(service)))

  it.effect("finds a subscriber by address in any case; refuses what is not an address", () =>
    Effect.gen(function*() {
      const alerts = yield* Alerts
      const operations = yield* AlertsOperations
      const tax = yield* topicList("Tax", "tax")
      yield* alerts.subscribe({ address: "Ada@Example.com", subscriberListId: tax.id, frequency: "daily" })

      const found = yield* operations.subscriberByAddress("ADA@example.COM")
      expect(found.subscriber.address).toBe("Ada@example.com")
      expect(found.subscriptions.map(({ list, subscription }) => [list.slug, subscription.frequency])).toEqual([["tax", "daily"]])
      expect((yield* Effect.flip(operations.subscriberByAddress("nobody@example.com")))._tag).toBe("SubscriberNotFound")
      const refused = yield* Effect.flip(operations.subscriberByAddress("not an address"))
      expect(refused._tag).toBe("UnprocessableEntity")
      expect(refused).toMatchObject({ details: { address: [expect.any(String)] } })
    }).pipe(Effect.provide(service)))

  it.effect("queues a test email as a single pending email and reports the queue with its health", () =>
    Effect.gen(function*() {
      const operations = yield* AlertsOperations
      const { emailStore, jobs } = yield* AlertsParts
      yield* TestClock.setTime(Date.parse("2024-03-01T12:00:00Z"))
      const empty = yield* operations.queue
      expect(empty).toEqual({
        emails: { pending: 0, sending: 0, sent: 0, failed: 0 },
        oldestPendingAge: null,
        fanOutJobs: { waiting: 0, running: 0, dead: 0 },
        digestJobs: { waiting: 0, running: 0, dead: 0 },
        health: { queueSize: "ok", queueAge: "ok", delivery: "ok", deliveryPausedUntil: null, status: "ok" }
      })

      const queued = yield* operations.queueTestEmail("ops@example.com")
      const stored = yield* emailStore.email(queued.id)
      expect(Option.getOrThrow(stored)).toMatchObject({
        address: "ops@example.com",
        subject: TEST_EMAIL_SUBJECT,
        status: "pending",
        subscriptionIds: []
      })
      yield* jobs.enqueue(fanOutJob, { notificationId: "00000000-0000-4000-8000-000000000001" })
      yield* TestClock.adjust("90 seconds")
      const report = yield* operations.queue
      expect(report.emails).toEqual({ pending: 1, sending: 0, sent: 0, failed: 0 })
      expect(report.oldestPendingAge).toEqual(Duration.seconds(90))
      expect(report.fanOutJobs).toEqual({ waiting: 1, running: 0, dead: 0 })
      expect(report.health).toMatchObject({ queueSize: "warning", queueAge: "warning", delivery: "ok", status: "warning" })

      expect((yield* Effect.flip(operations.queueTestEmail("nope")))._tag).toBe("UnprocessableEntity")
    }).pipe(Effect.provide(service)))
})

describe("sendTestEmail", () => {
  const recordingProvider = (sent: Array<OutgoingEmail>, outcome: Effect.Effect<void, DeliveryFailure> = Effect.void) =>
    Layer.succeed(EmailProvider, { name: "recording", send: (email) => Effect.zipRight(Effect.sync(() => sent.push(email)), outcome) })

  it.effect("sends the test email through the provider at once", () => {
    const sent: Array<OutgoingEmail> = []
    return Effect.gen(function*() {
      const result = yield* sendTestEmail("ops@example.com")
      expect(result).toMatchObject({ address: "ops@example.com", provider: "recording" })
      expect(sent).toEqual([expect.objectContaining({ id: result.id, address: "ops@example.com", subject: TEST_EMAIL_SUBJECT })])
    }).pipe(Effect.provide(recordingProvider(sent)))
  })

  it.effect("comes out with the provider's failure as it was, and refuses a bad address before sending", () => {
    const sent: Array<OutgoingEmail> = []
    // a variable, not a literal: main's PermanentDeliveryFailure also has `addressRejected`, this branch's base does not
    const refusal = { reason: "550 no such user", addressRejected: true }
    const providerFailure = new PermanentDeliveryFailure(refusal)
    return Effect.gen(function*() {
      const failure = yield* Effect.flip(sendTestEmail("ops@example.com"))
      expect(failure).toBe(providerFailure)
      expect((yield* Effect.flip(sendTestEmail("bad")))._tag).toBe("UnprocessableEntity")
      expect(sent).toHaveLength(1)
    }).pipe(Effect.provide(recordingProvider(sent, Effect.fail(providerFailure))))
  })
})
