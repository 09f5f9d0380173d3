import { JobQueue, layerMemory as jobQueueMemory } from "@civicstack/jobs"
import { describe, expect, it } from "@effect/vitest"
import type { Layer } from "effect"
import { Duration, Effect, Fiber, Option, Queue, TestClock } from "effect"
import { DeliveryPause } from "../../src/services/DeliveryPause"
import { runDeliveryWorker } from "../../src/workers/delivery"
import { PermanentDeliveryFailure, TemporaryDeliveryFailure } from "../../src/services/EmailProvider"
import { EmailStore } from "../../src/storage/EmailStore"
import { sendDigests } from "../../src/workers/digests"
import { fanOutNotification } from "../../src/workers/fanOut"
import { fanOutJob } from "../../src/domain/jobs"
import { deliverySettings } from "../../src/settings"
import { deliveryWorkers } from "../../src/workers/deliveryWorkers"
import { AlertsStore } from "../../src/storage/AlertsStore"
import { StoreError } from "@civicstack/kit"
import { aNotification, at, clockAt, subscriberTo, topicList } from "../fixtures/records"
import { advanceUntil, letWorkRun, makeScriptedProvider, waitFor, waitForEffect } from "../fixtures/workers"

const settings = deliverySettings({
  publicSiteUrl: "https://www.example.org/",
  footer: "Manage your subscriptions.",
  backoff: { base: Duration.seconds(10), max: Duration.minutes(5) },
  maxAttempts: 3,
  // the rate limit has a test of its own; here it never makes a send wait
  rateLimitPerSecond: 1_000_000
})

/** Two lists tagged `tax`; Ada subscribes to both, Bob to one, Cy to the daily digest. */
const twoListsAndThreeSubscribers = Effect.gen(function*() {
  const vat = yield* topicList("VAT", "tax", "vat")
  const income = yield* topicList("Income tax", "tax")
  const ada = yield* subscriberTo("ada@example.com", [vat.id, income.id])
  const bob = yield* subscriberTo("bob@example.com", [income.id])
  yield* subscriberTo("cy@example.com", [vat.id], "daily")
  return { ada, bob }
})

const singleEmail = (address: string) =>
  Effect.flatMap(EmailStore, (emails) => emails.queueEmail({ address, subject: "Hello", body: "Body." }))

/** Fan-out, delivery and the workers' layer, on the memory and SQL stores. */
export const workerSuite = (name: string, backend: () => Layer.Layer<EmailStore | AlertsStore, unknown>) =>
  describe(`email workers on ${name}`, () => {
    const test = (title: string, body: Effect.Effect<void, unknown, EmailStore | AlertsStore>) =>
      it.effect(title, () => Effect.provide(Effect.zipRight(clockAt(0), body), backend()))

    test("fan-out writes one email per subscriber, however many of their lists match, and only once", Effect.gen(function*() {
      const alerts = yield* AlertsStore
      const emails = yield* EmailStore
      const { ada, bob } = yield* twoListsAndThreeSubscribers
      const notification = yield* alerts.insertNotification(aNotification({
        subject: null,
        body: null,
        title: "VAT rates",
        description: "New rates.",
        changeNote: "Rates for 2025 added.",
        basePath: "/vat-rates"
      }))
      // chunks of one subscriber id, so that each subscriber is a statement of its own
      const chunked = { ...settings, fanOutChunkSize: 1 }
      expect(yield* fanOutNotification(notification.id, chunked)).toBe(2)
      expect(yield* fanOutNotification(notification.id, chunked)).toBe(0)
      expect(yield* fanOutNotification(notification.id, settings)).toBe(0)

      const created = yield* emails.emailsOfNotification(notification.id)
      expect(created.map((email) => [email.address, email.subscriptionIds.length])).toEqual([
        ["ada@example.com", 2],
        ["bob@example.com", 1]
      ])
      const adaEmail = created[0]!
      expect(adaEmail.subject).toBe("VAT rates")
      expect(adaEmail.body).toContain("[VAT rates](https://www.example.org/vat-rates)\n\nNew rates.\n\nChange made: Rates for 2025 added.")
      for (const subscription of ada.subscriptions) {
        expect(adaEmail.body).toContain(`(https://www.example.org/email/unsubscribe/${subscription.id})`)
      }
      expect(adaEmail.body!.endsWith("Manage your subscriptions.")).toBe(true)
      expect(created[1]!.body).toContain(`https://www.example.org/email/unsubscribe/${bob.subscriptions[0]!.id}`)
      expect(created[1]!.body).not.toContain(ada.subscriptions[0]!.id)
    }))

    test("a notification that matches no list writes nothing", Effect.gen(function*() {
      const alerts = yield* AlertsStore
      yield* twoListsAndThreeSubscribers
      const notification = yield* alerts.insertNotification(aNotification({ tags: new Map([["topics", ["farming"]]]) }))
      expect(yield* fanOutNotification(notification.id, settings)).toBe(0)
      expect(yield* fanOutNotification("00000000-0000-4000-8000-000000000000", settings)).toBe(0)
    }))

    test("the workers' layer fans a queued notification out and delivers it, one-click unsubscribe for one subscription", Effect.gen(function*() {
      const alerts = yield* AlertsStore
      const { bob } = yield* twoListsAndThreeSubscribers
      const provider = makeScriptedProvider()
      const notification = yield* alerts.insertNotification(aNotification())
      yield* Effect.gen(function*() {
        const jobs = yield* JobQueue
        yield* jobs.enqueue(fanOutJob, { notificationId: notification.id })
        yield* Effect.gen(function*() {
          yield* advanceUntil("two deliveries", () => provider.delivered().length === 2, "200 millis")
        }).pipe(Effect.provide(deliveryWorkers(settings)), Effect.scoped)
      }).pipe(Effect.provide(provider.layer), Effect.provide(jobQueueMemory))

      const delivered = provider.delivered().map(({ email }) => email).sort((a, b) => a.address.localeCompare(b.address))
      expect(delivered.map((email) => email.address)).toEqual(["ada@example.com", "bob@example.com"])
      expect(delivered[0]!.unsubscribeUrl).toBeUndefined()
      expect(delivered[1]!.unsubscribeUrl).toBe(`https://www.example.org/email/unsubscribe/${bob.subscriptions[0]!.id}`)
      expect(delivered[1]).toMatchObject({ subject: "Tax changes" })
      expect(delivered[1]!.body).toContain("Rates change in April.")
      const emails = yield* EmailStore
      const stored = yield* emails.emailsOfNotification(notification.id)
      expect(stored.map((email) => email.status)).toEqual(["sent", "sent"])
      // the body delivery put together is the one stored, the subscriber's own unsubscribe links in it
      expect(delivered.map(({ body, subject }) => ({ subject, body }))).toEqual(
        stored.map(({ body, subject }) => ({ subject, body }))
      )
      expect(delivered[1]!.body.startsWith("Rates change in April.")).toBe(true)
      expect(delivered[1]!.body).toContain(`(https://www.example.org/email/unsubscribe/${bob.subscriptions[0]!.id})`)
    }))

    test("a temporary failure is tried again when the provider asked, then sent", Effect.gen(function*() {
      const emails = yield* EmailStore
      const provider = makeScriptedProvider({
        "busy@example.com": [new TemporaryDeliveryFailure({ reason: "429", retryAfterMillis: 30_000 })]
      })
      const id = yield* singleEmail("busy@example.com")
      const worker = yield* Effect.fork(runDeliveryWorker(settings).pipe(Effect.provide(provider.layer)))
      yield* waitFor("the first attempt", () => provider.attempts.length === 1)
      let stored = yield* emails.email(id)
      for (let tries = 0; tries < 2000 && Option.getOrThrow(stored).status !== "pending"; tries++) {
        yield* letWorkRun
        stored = yield* emails.email(id)
      }
      expect(Option.getOrThrow(stored)).toMatchObject({ status: "pending", attempts: 1, nextAttemptAt: at(30) })
      yield* TestClock.adjust("29 seconds")
      yield* letWorkRun
      expect(provider.attempts.length).toBe(1)
      yield* TestClock.adjust("2 seconds")
      yield* waitFor("the second attempt", () => provider.delivered().length === 1)
      yield* Fiber.interrupt(worker)
      expect(provider.attempts.map((attempt) => [attempt.outcome, attempt.at])).toEqual([
        ["TemporaryDeliveryFailure", at(0).getTime()],
        ["delivered", expect.any(Number)]
      ])
      expect(provider.attempts[1]!.at).toBeGreaterThanOrEqual(at(30).getTime())
      expect(Option.getOrThrow(yield* emails.email(id))).toMatchObject({ status: "sent", attempts: 2 })
    }))

    test("a refusal of the service as a sender pauses delivery: no attempt used, no subscription ended, then sent", Effect.gen(function*() {
      const alerts = yield* AlertsStore
      const emails = yield* EmailStore
      const { ada } = yield* twoListsAndThreeSubscribers
      const relayDenied = new TemporaryDeliveryFailure({ reason: "550 5.7.1 Relaying denied", senderRefused: true })
      const provider = makeScriptedProvider({ "ada@example.com": [relayDenied] })
      const first = yield* singleEmail("ada@example.com")
      const second = yield* singleEmail("bob@example.com")
      const pause = yield* DeliveryPause
      const worker = yield* Effect.fork(
        runDeliveryWorker({ ...settings, concurrency: 1 }).pipe(Effect.provideService(DeliveryPause, pause), Effect.provide(provider.layer))
      )
      yield* waitFor("the refused attempt", () => provider.attempts.length >= 1)
      let stored = yield* emails.email(first)
      for (let tries = 0; tries < 2000 && Option.getOrThrow(stored).status !== "pending"; tries++) {
        yield* letWorkRun
        stored = yield* emails.email(first)
      }
      // handed back without using an attempt; the other email of the batch waits too
      expect(Option.getOrThrow(stored)).toMatchObject({ status: "pending", attempts: 0 })
      expect(yield* pause.state).toMatchObject({ pausedUntil: at(60), pauses: 1, reason: "550 5.7.1 Relaying denied" })
      yield* TestClock.adjust("59 seconds")
      yield* letWorkRun
      expect(provider.attempts).toHaveLength(1)
      yield* TestClock.adjust("2 seconds")
      yield* waitFor("both sent", () => provider.delivered().length === 2)
      yield* Fiber.interrupt(worker)
      expect(Option.getOrThrow(yield* emails.email(first))).toMatchObject({ status: "sent" })
      expect(Option.getOrThrow(yield* emails.email(second))).toMatchObject({ status: "sent", attempts: 1 })
      expect(yield* alerts.activeSubscriptionsOf(ada.subscriber.id)).toHaveLength(2)
    }).pipe(Effect.provide(DeliveryPause.layer)))

    test("a permanent failure fails the email and ends the address's subscriptions", Effect.gen(function*() {
      const alerts = yield* AlertsStore
      const emails = yield* EmailStore
      const { ada, bob } = yield* twoListsAndThreeSubscribers
      const provider = makeScriptedProvider({
        "ada@example.com": [new PermanentDeliveryFailure({ reason: "no such mailbox", addressRejected: true })]
      })
      const notification = yield* alerts.insertNotification(aNotification())
      yield* fanOutNotification(notification.id, settings)
      const worker = yield* Effect.fork(runDeliveryWorker(settings).pipe(Effect.provide(provider.layer)))
      yield* waitFor("both attempts", () => provider.attempts.length === 2)
      let subscriber = yield* alerts.subscriberById(ada.subscriber.id)
      for (let tries = 0; tries < 2000 && Option.getOrThrow(subscriber).deactivatedAt === null; tries++) {
        yield* letWorkRun
        subscriber = yield* alerts.subscriberById(ada.subscriber.id)
      }
      yield* Fiber.interrupt(worker)
      expect(Option.getOrThrow(subscriber).deactivatedAt).toEqual(at(0))
      for (const subscription of ada.subscriptions) {
        const details = Option.getOrThrow(yield* alerts.subscriptionById(subscription.id))
        expect(details.subscription).toMatchObject({ endedReason: "non_existent_email", endedAt: at(0) })
      }
      expect(yield* alerts.activeSubscriptionsOf(bob.subscriber.id)).toHaveLength(1)
      const stored = yield* emails.emailsOfNotification(notification.id)
      expect(stored.map((email) => [email.address, email.status, email.failureReason])).toEqual([
        ["ada@example.com", "failed", "no such mailbox"],
        ["bob@example.com", "sent", null]
      ])
    }))

    test("a message refused for good fails, but its address keeps its subscriptions", Effect.gen(function*() {
      const alerts = yield* AlertsStore
      const emails = yield* EmailStore
      const { ada } = yield* twoListsAndThreeSubscribers
      const provider = makeScriptedProvider({
        "ada@example.com": [new PermanentDeliveryFailure({ reason: "unknown template", addressRejected: false })]
      })
      const notification = yield* alerts.insertNotification(aNotification())
      yield* fanOutNotification(notification.id, settings)
      const worker = yield* Effect.fork(runDeliveryWorker(settings).pipe(Effect.provide(provider.layer)))
      yield* waitFor("both attempts", () => provider.attempts.length === 2)
      let stored = yield* emails.emailsOfNotification(notification.id)
      for (let tries = 0; tries < 2000 && stored.some((email) => email.status !== "sent" && email.status !== "failed"); tries++) {
        yield* letWorkRun
        stored = yield* emails.emailsOfNotification(notification.id)
      }
      yield* Fiber.interrupt(worker)
      expect(stored.map((email) => [email.address, email.status])).toEqual([["ada@example.com", "failed"], ["bob@example.com", "sent"]])
      expect(Option.getOrThrow(yield* alerts.subscriberById(ada.subscriber.id)).deactivatedAt).toBeNull()
      expect(yield* alerts.activeSubscriptionsOf(ada.subscriber.id)).toHaveLength(ada.subscriptions.length)
    }))

    test("digests: one email per subscriber with a section per subscription, never empty, never twice", Effect.gen(function*() {
      const alerts = yield* AlertsStore
      const emails = yield* EmailStore
      const tax = yield* topicList("Tax", "tax")
      const vat = yield* topicList("VAT", "vat")
      const farming = yield* topicList("Farming", "farming")
      const ada = yield* subscriberTo("ada@example.com", [vat.id, tax.id], "daily")
      const bob = yield* subscriberTo("bob@example.com", [tax.id], "weekly")
      yield* subscriberTo("cy@example.com", [tax.id])
      yield* subscriberTo("dan@example.com", [farming.id], "daily")
      const notify = (when: string, subject: string, topics: ReadonlyArray<string>) =>
        Effect.gen(function*() {
          yield* TestClock.setTime(new Date(when).getTime())
          const notification = yield* alerts.insertNotification(aNotification({
            subject,
            body: `About ${subject}.`,
            tags: new Map([["topics", topics]])
          }))
          yield* fanOutNotification(notification.id, settings)
          return notification
        })
      yield* notify("2024-02-29T09:00:00Z", "Income tax", ["tax"])
      yield* notify("2024-03-01T07:59:00Z", "VAT and tax", ["tax", "vat"])
      yield* notify("2024-03-01T08:00:00Z", "Tomorrow", ["tax"])

      // Friday 1 March, 08:30: the daily window to 08:00 holds the first two
      yield* TestClock.setTime(new Date("2024-03-01T08:30:00Z").getTime())
      expect(yield* sendDigests("daily", settings)).toBe(1)
      expect(yield* sendDigests("daily", settings)).toBe(0)
      // the last weekly window, to Saturday 24 February, holds none of them
      expect(yield* sendDigests("weekly", settings)).toBe(0)
      const run = yield* emails.startDigestRun({
        frequency: "daily",
        start: new Date("2024-02-29T08:00:00Z"),
        end: new Date("2024-03-01T08:00:00Z")
      })
      expect(run.completedAt).not.toBeNull()
      const [digest, ...others] = yield* emails.emailsOfDigestRun(run.id)
      expect(others).toEqual([])
      const [taxSubscription, vatSubscription] = [ada.subscriptions[1]!, ada.subscriptions[0]!]
      expect(digest).toMatchObject({
        address: "ada@example.com",
        subject: "Your daily update",
        subscriptionIds: [taxSubscription.id, vatSubscription.id].sort()
      })
      const unsubscribe = (id: string) => `https://www.example.org/email/unsubscribe/${id}`
      expect(digest!.body).toBe([
        "## Tax",
        "### Income tax\n\nAbout Income tax.",
        "### VAT and tax\n\nAbout VAT and tax.",
        `[Unsubscribe from Tax](${unsubscribe(taxSubscription.id)})`,
        "## VAT",
        "### VAT and tax\n\nAbout VAT and tax.",
        `[Unsubscribe from VAT](${unsubscribe(vatSubscription.id)})`,
        "---",
        "Manage your subscriptions."
      ].join("\n\n"))

      // Saturday 2 March, 08:30: the weekly window holds all three for Bob; the daily one the last for Ada
      yield* TestClock.setTime(new Date("2024-03-02T08:30:00Z").getTime())
      expect(yield* sendDigests("weekly", settings)).toBe(1)
      expect(yield* sendDigests("daily", settings)).toBe(1)
      expect(yield* sendDigests("weekly", settings)).toBe(0)
      const weekly = yield* emails.startDigestRun({
        frequency: "weekly",
        start: new Date("2024-02-24T08:00:00Z"),
        end: new Date("2024-03-02T08:00:00Z")
      })
      const [bobs] = yield* emails.emailsOfDigestRun(weekly.id)
      expect(bobs).toMatchObject({
        address: "bob@example.com",
        subject: "Your weekly update",
        subscriptionIds: [bob.subscriptions[0]!.id]
      })
      expect(bobs!.body!.match(/^### /gm)).toHaveLength(3)
    }))

    test("digests missed while the workers were down are each sent once, late, with their own window's content", Effect.gen(function*() {
      const alerts = yield* AlertsStore
      const emails = yield* EmailStore
      const tax = yield* topicList("Tax", "tax")
      yield* subscriberTo("ada@example.com", [tax.id], "daily")
      yield* subscriberTo("bob@example.com", [tax.id], "weekly")
      const notify = (when: string, subject: string) =>
        Effect.gen(function*() {
          yield* TestClock.setTime(new Date(when).getTime())
          const notification = yield* alerts.insertNotification(
            aNotification({ subject, body: `About ${subject}.`, tags: new Map([["topics", ["tax"]]]) })
          )
          // records the lists it matched, which digests read
          yield* fanOutNotification(notification.id, settings)
        })
      // Monday 4 March, 08:30: the digests of the window to 08:00 go out, then the workers stop
      yield* notify("2024-03-03T12:00:00Z", "Sunday")
      yield* TestClock.setTime(new Date("2024-03-04T08:30:00Z").getTime())
      expect(yield* sendDigests("daily", settings)).toBe(1)
      expect(yield* sendDigests("weekly", settings)).toBe(0)
      yield* notify("2024-03-04T12:00:00Z", "Monday")
      yield* notify("2024-03-06T12:00:00Z", "Wednesday")
      yield* notify("2024-03-09T12:00:00Z", "Saturday noon")

      // Sunday 10 March, 20:00: back after six days; the windows to Tuesday, Wednesday, Thursday, Friday, Saturday
      // and Sunday 08:00 are each run, and the week to Saturday 9 March 08:00 too
      yield* TestClock.setTime(new Date("2024-03-10T20:00:00Z").getTime())
      expect(yield* sendDigests("daily", settings)).toBe(3)
      expect(yield* sendDigests("weekly", settings)).toBe(1)
      expect(yield* sendDigests("daily", settings)).toBe(0)
      expect(yield* sendDigests("weekly", settings)).toBe(0)

      const digestOf = (frequency: "daily" | "weekly", start: string, end: string) =>
        Effect.flatMap(emails.startDigestRun({ frequency, start: new Date(start), end: new Date(end) }), (run) =>
          emails.emailsOfDigestRun(run.id))
      const bodies = (found: ReadonlyArray<{ readonly body: string | null }>) =>
        found.map((email) => email.body!.match(/^### .*$/gm))
      expect(bodies(yield* digestOf("daily", "2024-03-04T08:00:00Z", "2024-03-05T08:00:00Z"))).toEqual([["### Monday"]])
      expect(bodies(yield* digestOf("daily", "2024-03-05T08:00:00Z", "2024-03-06T08:00:00Z"))).toEqual([])
      expect(bodies(yield* digestOf("daily", "2024-03-06T08:00:00Z", "2024-03-07T08:00:00Z"))).toEqual([["### Wednesday"]])
      expect(bodies(yield* digestOf("daily", "2024-03-09T08:00:00Z", "2024-03-10T08:00:00Z"))).toEqual([["### Saturday noon"]])
      expect(bodies(yield* digestOf("weekly", "2024-03-02T08:00:00Z", "2024-03-09T08:00:00Z")))
        .toEqual([["### Sunday", "### Monday", "### Wednesday"]])
    }))

    test("what the provider took is marked sent within the flush interval while another send of the batch is slow; stopping lets that send finish", Effect.gen(function*() {
      const emails = yield* EmailStore
      const provider = makeScriptedProvider({ "slow@example.com": ["slow"] })
      const slow = yield* singleEmail("slow@example.com")
      const quick = yield* singleEmail("quick@example.com")
      const worker = yield* Effect.fork(runDeliveryWorker(settings).pipe(Effect.provide(provider.layer)))
      yield* waitFor("both sends to start", () => provider.started() === 2)
      const statusOf = (id: string) => Effect.map(emails.email(id), (email) => Option.getOrThrow(email).status)
      yield* TestClock.adjust(settings.sentFlushInterval)
      yield* waitForEffect("the quick one to be marked sent", Effect.map(statusOf(quick), (status) => status === "sent"))
      expect(yield* statusOf(slow)).toBe("sending")
      // stopping mid-send: the send finishes and is marked, rather than handed back to be sent again
      const stopping = yield* Effect.fork(Fiber.interrupt(worker))
      yield* letWorkRun
      yield* TestClock.adjust("5 seconds")
      yield* Fiber.join(stopping)
      expect(provider.delivered().map(({ email }) => email.id).sort()).toEqual([quick, slow].sort())
      expect(Option.getOrThrow(yield* emails.email(slow))).toMatchObject({ status: "sent", attempts: 1 })
      expect(Option.getOrThrow(yield* emails.email(quick))).toMatchObject({ status: "sent", attempts: 1 })
    }))

    test("while sent emails cannot be marked, a worker sends no more than concurrency + sentFlushSize of them", Effect.gen(function*() {
      const emails = yield* EmailStore
      const provider = makeScriptedProvider()
      for (let n = 0; n < 12; n++) yield* singleEmail(`reader-${n}@example.com`)
      const small = { ...settings, concurrency: 2, sentFlushSize: 3, batchSize: 12 }
      // the database refuses the marks (it is away): each of these emails would be sent again after a crash
      const stuck = { ...emails, markSentMany: () => Effect.fail(new StoreError({ message: "the database is away" })) }
      const worker = yield* Effect.fork(
        runDeliveryWorker(small).pipe(Effect.provide(provider.layer), Effect.provideService(EmailStore, stuck))
      )
      yield* waitFor("the bound to be reached", () => provider.delivered().length === 5)
      for (let flushes = 0; flushes < 5; flushes++) {
        yield* TestClock.adjust(small.sentFlushInterval)
        yield* letWorkRun
      }
      expect(provider.delivered()).toHaveLength(5)
      yield* Fiber.interrupt(worker)
    }))

    test("fan-out wakes an idle delivery worker: its emails go out without waiting for the next poll", Effect.gen(function*() {
      const alerts = yield* AlertsStore
      yield* twoListsAndThreeSubscribers
      const provider = makeScriptedProvider()
      const queued = yield* Queue.sliding<void>(1)
      // the clock never moves in this test: only the fan-out's wake-up can end the worker's wait for its next poll
      const worker = yield* Effect.fork(runDeliveryWorker(settings, Queue.take(queued)).pipe(Effect.provide(provider.layer)))
      yield* letWorkRun
      const notification = yield* alerts.insertNotification(aNotification())
      expect(yield* fanOutNotification(notification.id, settings, Queue.offer(queued, undefined))).toBe(2)
      yield* waitFor("both deliveries", () => provider.delivered().length === 2)
      yield* Fiber.interrupt(worker)
    }))

    test("stopping the worker while it waits for the rate limit hands the email back, and the next worker sends it", Effect.gen(function*() {
      const emails = yield* EmailStore
      const provider = makeScriptedProvider()
      const first = yield* singleEmail("first@example.com")
      const second = yield* singleEmail("second@example.com")
      // one email a second: the second waits for the limit when the worker stops
      const worker = yield* Effect.fork(
        runDeliveryWorker({ ...settings, rateLimitPerSecond: 1, concurrency: 1 }).pipe(Effect.provide(provider.layer))
      )
      yield* waitFor("the first send", () => provider.delivered().length === 1)
      yield* Fiber.interrupt(worker)
      const waiting = provider.delivered()[0]!.email.id === first ? second : first
      expect(Option.getOrThrow(yield* emails.email(waiting))).toMatchObject({ status: "pending", attempts: 0 })

      const next = yield* Effect.fork(runDeliveryWorker(settings).pipe(Effect.provide(provider.layer)))
      yield* waitFor("the second send", () => provider.delivered().length === 2)
      yield* Fiber.interrupt(next)
      expect(provider.delivered()[1]!.email.id).toBe(waiting)
    }))
  })
