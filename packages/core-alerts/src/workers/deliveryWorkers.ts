import { JobQueue, runSchedules } from "@civicstack/jobs"
import { keepRunning } from "@civicstack/kit"
import type { Layer as LayerType } from "effect"
import { Effect, Layer, Queue, Stream } from "effect"
import { EMAILS_QUEUED_SIGNAL } from "../domain/jobs"
import { signalEmailsQueued } from "../services/EmailQueue"
import type { EmailProvider } from "../services/EmailProvider"
import type { DeliverySettings } from "../settings"
import { deliverySettings } from "../settings"
import type { AlertsStore } from "../storage/AlertsStore"
import type { EmailStore } from "../storage/EmailStore"
import { runDeliveryWorker } from "./delivery"
import type { DeliveryPause } from "../services/DeliveryPause"
import { digestSchedules, runDigestWorker } from "./digests"
import { runFanOutWorker } from "./fanOut"
import { retentionSchedule, runRetentionWorker } from "./retention"

/**
 * The email side's background work: fan-out of notifications, delivery to the provider, the daily and weekly
 * digests, and the retention of old emails, with their schedules. Runs while the layer's scope is open; closing it
 * stops them (unsent emails go back to pending).
 */
export const deliveryWorkers = (
  overrides: Partial<DeliverySettings> = {}
): LayerType.Layer<never, never, EmailStore | AlertsStore | JobQueue | EmailProvider | DeliveryPause> =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const settings = deliverySettings(overrides)
    const jobs = yield* JobQueue
    // emails queued by any copy (fan-out, digests, requests) wake delivery rather than waiting for its next poll
    const queued = yield* Queue.sliding<void>(1)
    yield* jobs.wakeups(EMAILS_QUEUED_SIGNAL).pipe(Stream.runForEach(() => Queue.offer(queued, undefined)), Effect.forkScoped)
    const signalQueued = signalEmailsQueued(jobs)
    yield* Effect.all([
      keepRunning("Email alerts fan-out", runFanOutWorker(settings, signalQueued)),
      keepRunning("Email alerts delivery", runDeliveryWorker(settings, Queue.take(queued))),
      keepRunning("Email alerts retention", runRetentionWorker(settings)),
      keepRunning("Email alerts digests", runDigestWorker(settings, signalQueued)),
      keepRunning("Email alerts schedules", runSchedules([retentionSchedule(settings), ...digestSchedules(settings)]))
    ], { concurrency: "unbounded", discard: true }).pipe(Effect.forkScoped)
  }))

