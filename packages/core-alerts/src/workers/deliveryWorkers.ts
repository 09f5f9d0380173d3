import { runSchedules } from "@civicstack/jobs"
import type { JobQueue } from "@civicstack/jobs"
import { keepRunning } from "@civicstack/kit"
import type { Layer as LayerType } from "effect"
import { Effect, Layer, Queue } from "effect"
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
    // fan-out wakes delivery after each chunk that wrote emails, rather than leaving them to the next poll
    const queued = yield* Queue.sliding<void>(1)
    yield* Effect.all([
      keepRunning("Email alerts fan-out", runFanOutWorker(settings, Queue.offer(queued, undefined))),
      keepRunning("Email alerts delivery", runDeliveryWorker(settings, Queue.take(queued))),
      keepRunning("Email alerts retention", runRetentionWorker(settings)),
      keepRunning("Email alerts digests", runDigestWorker(settings)),
      keepRunning("Email alerts schedules", runSchedules([retentionSchedule(settings), ...digestSchedules(settings)]))
    ], { concurrency: "unbounded", discard: true }).pipe(Effect.forkScoped)
  }))

