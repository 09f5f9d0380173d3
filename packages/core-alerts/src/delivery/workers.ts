import { runSchedules } from "@civicstack/jobs"
import type { JobQueue } from "@civicstack/jobs"
import type { Layer as LayerType } from "effect"
import { Effect, Layer, Queue, Schedule } from "effect"
import type { AlertsStore } from "../storage/AlertsStore"
import { runDeliveryWorker } from "./deliver"
import { digestSchedules, runDigestWorker } from "./digest"
import type { EmailProvider } from "./EmailProvider"
import type { EmailStore } from "./EmailStore"
import { runFanOutWorker } from "./fanOut"
import { retentionSchedule, runRetentionWorker } from "./retention"
import type { DeliverySettings } from "./settings"
import { deliverySettings } from "./settings"

/** Restarts a worker that stopped on a failure (the database went away), sooner at first, then every 5 seconds. */
const keepRunning = <A, E, R>(name: string, worker: Effect.Effect<A, E, R>) =>
  worker.pipe(
    Effect.tapErrorCause((cause) => Effect.logWarning(`Email alerts ${name} stopped; starting it again`, cause)),
    Effect.retry(Schedule.exponential("200 millis").pipe(Schedule.union(Schedule.spaced("5 seconds"))))
  )

/**
 * The email side's background work: fan-out of notifications, delivery to the provider, the daily and weekly
 * digests, and the retention of old emails, with their schedules. Runs while the layer's scope is open; closing it
 * stops them (unsent emails go back to pending).
 */
export const deliveryWorkers = (
  overrides: Partial<DeliverySettings> = {}
): LayerType.Layer<never, never, EmailStore | AlertsStore | JobQueue | EmailProvider> =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const settings = deliverySettings(overrides)
    // fan-out wakes delivery after each chunk that wrote emails, rather than leaving them to the next poll
    const queued = yield* Queue.sliding<void>(1)
    yield* Effect.all([
      keepRunning("fan-out", runFanOutWorker(settings, Queue.offer(queued, undefined))),
      keepRunning("delivery", runDeliveryWorker(settings, Queue.take(queued))),
      keepRunning("retention", runRetentionWorker(settings)),
      keepRunning("digests", runDigestWorker(settings)),
      keepRunning("schedules", runSchedules([retentionSchedule(settings), ...digestSchedules(settings)]))
    ], { concurrency: "unbounded", discard: true }).pipe(Effect.forkScoped)
  }))

