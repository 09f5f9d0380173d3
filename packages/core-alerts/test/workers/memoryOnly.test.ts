import { JobQueue, layerMemory as jobQueueMemory, runSchedules } from "@civicstack/jobs"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Layer, Option, TestClock } from "effect"
import { runDeliveryWorker } from "../../src/workers/delivery"
import { EmailQueue } from "../../src/services/EmailQueue"
import { EmailStore } from "../../src/storage/EmailStore"
import { fanOutJob } from "../../src/domain/jobs"
import { deliverySettings } from "../../src/settings"
import { pruneEmailsJob, retentionSchedule, runRetentionWorker } from "../../src/workers/retention"
import { memoryStores } from "../fixtures/backends"
import { at, clockAt } from "../fixtures/records"
import { advanceBy, advanceUntil, letWorkRun, makeScriptedProvider, waitForEffect } from "../fixtures/workers"

const queueEmails = (count: number) =>
  Effect.flatMap(EmailStore, (emails) =>
    Effect.forEach(
      Array.from({ length: count }, (_, index) => index),
      (index) => emails.queueEmail({ address: `reader${index}@example.com`, subject: "Hello", body: "Body." })
    ))

const withStores = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provide(Effect.zipRight(clockAt(0), effect), memoryStores())

describe("the delivery worker's rate limit", () => {
  it.effect("never hands the provider more emails in a second than the limit", () =>
    withStores(Effect.gen(function*() {
      yield* queueEmails(12)
      const provider = makeScriptedProvider()
      const settings = deliverySettings({ rateLimitPerSecond: 5, batchSize: 20, concurrency: 20 })
      const worker = yield* Effect.fork(runDeliveryWorker(settings).pipe(Effect.provide(provider.layer)))
      yield* advanceUntil("twelve deliveries", () => provider.delivered().length === 12, "50 millis")
      yield* Fiber.interrupt(worker)

      const times = provider.delivered().map((attempt) => attempt.at - at(0).getTime())
      const perSecond = [0, 1, 2].map((second) => times.filter((time) => Math.floor(time / 1000) === second).length)
      expect(perSecond).toEqual([5, 5, 2])
      for (let index = 0; index + 5 < times.length; index++) {
        expect(times[index + 5]! - times[index]!).toBeGreaterThanOrEqual(1000)
      }
    })))
})

describe("the delivery worker's lease", () => {
  it.effect("what cannot be sent in the first half of the lease waits to be claimed again, and is sent once", () =>
    withStores(Effect.gen(function*() {
      const emails = yield* EmailStore
      const ids = yield* queueEmails(8)
      const provider = makeScriptedProvider()
      const settings = deliverySettings({
        rateLimitPerSecond: 1,
        lease: Duration.seconds(6),
        batchSize: 8,
        concurrency: 8,
        pollInterval: Duration.millis(500)
      })
      const worker = yield* Effect.fork(runDeliveryWorker(settings).pipe(Effect.provide(provider.layer)))
      yield* advanceUntil("three deliveries", () => provider.delivered().length === 3, "100 millis")
      // the first three went out at 0, 1 and 2 seconds, within half the lease; the others wait for their leases to end
      yield* advanceBy(Duration.millis(2500), "100 millis")
      expect(provider.delivered().length).toBe(3)
      yield* advanceUntil("eight deliveries", () => provider.delivered().length === 8, "100 millis", 400)
      yield* Fiber.interrupt(worker)

      const delivered = provider.delivered().map((attempt) => attempt.email.id)
      expect([...delivered].sort()).toEqual([...ids].sort())
      const stored = yield* Effect.forEach(ids, (id) => Effect.map(emails.email(id), Option.getOrThrow))
      expect(stored.every((email) => email.status === "sent")).toBe(true)
      // three per lease: claimed once, twice, or three times
      expect(stored.map((email) => email.attempts).sort()).toEqual([1, 1, 1, 2, 2, 2, 3, 3])
    })))
})

describe("retention", () => {
  it.effect("the schedule enqueues the pruning at 03:30 London time, in summer time too", () =>
    Effect.gen(function*() {
      const jobs = yield* JobQueue
      yield* TestClock.setTime(new Date("2024-03-30T12:00:00Z").getTime())
      const schedule = yield* Effect.fork(runSchedules([retentionSchedule(deliverySettings())]))
      const pruneJobs = Effect.map(jobs.stats, (stats) =>
        stats.find((queue) => queue.queue === pruneEmailsJob.queue)?.queued ?? 0)
      yield* letWorkRun
      // the clocks go forward at 01:00 UTC on 31 March: 03:30 in London is then 02:30 UTC
      yield* TestClock.setTime(new Date("2024-03-31T02:29:00Z").getTime())
      yield* letWorkRun
      expect(yield* pruneJobs).toBe(0)
      yield* TestClock.setTime(new Date("2024-03-31T02:31:00Z").getTime())
      yield* waitForEffect("the prune job", Effect.map(pruneJobs, (count) => count === 1))
      yield* Fiber.interrupt(schedule)
    }).pipe(Effect.provide(jobQueueMemory)))

  it.effect("the prune job blanks week-old bodies and deletes four-week-old emails", () =>
    withStores(Effect.gen(function*() {
      const emails = yield* EmailStore
      const jobs = yield* JobQueue
      const [old, older] = yield* queueEmails(2)
      for (const claimed of yield* emails.claim(10, Duration.minutes(1))) yield* emails.markSent(claimed)
      yield* clockAt(60 * 60)
      const [recent] = yield* queueEmails(1)
      yield* TestClock.adjust(Duration.days(8))
      yield* jobs.enqueue(pruneEmailsJob, {})
      const worker = yield* Effect.fork(runRetentionWorker(deliverySettings({
        retention: { blankBodiesAfter: Duration.days(7), deleteAfter: Duration.days(8) }
      })))
      yield* waitForEffect("pruning", Effect.map(emails.email(old!), Option.isNone))
      yield* Fiber.interrupt(worker)
      expect(yield* emails.email(older!)).toEqual(Option.none())
      // pending, however old
      expect(Option.getOrThrow(yield* emails.email(recent!))).toMatchObject({ status: "pending", body: "Body." })
    }).pipe(Effect.provide(jobQueueMemory))))
})

describe("EmailQueue.layer", () => {
  it.effect("queues single emails, and its size counts waiting emails and fan-out jobs", () =>
    withStores(Effect.gen(function*() {
      const queue = yield* EmailQueue
      const jobs = yield* JobQueue
      expect(yield* queue.figures).toEqual({ size: 0, oldestImmediatePendingSince: null })
      yield* queue.queue({ address: "ada@example.com", subject: "Confirm your email address", body: "Link." })
      yield* clockAt(5)
      yield* queue.queue({ address: "bob@example.com", subject: "Confirm your email address", body: "Link." })
      yield* jobs.enqueue(fanOutJob, { notificationId: "00000000-0000-4000-8000-000000000001" })
      expect(yield* queue.figures).toEqual({ size: 3, oldestImmediatePendingSince: at(0) })
      const emails = yield* EmailStore
      const [claimed] = yield* emails.claim(1, Duration.minutes(1))
      expect(claimed).toMatchObject({
        address: "ada@example.com",
        subject: "Confirm your email address",
        body: { _tag: "Whole", text: "Link." }
      })
      yield* emails.markSent(claimed!)
      expect(yield* queue.figures).toEqual({ size: 2, oldestImmediatePendingSince: at(5) })
    }).pipe(Effect.provide(Layer.provideMerge(EmailQueue.layer, jobQueueMemory)))))
})
