import { runWorker } from "@civicstack/jobs"
import { Effect, Metric, Option } from "effect"
import { immediateEmailContent } from "../domain/compose"
import { fanOutJob } from "../domain/jobs"
import type { DeliverySettings } from "../settings"
import { AlertsStore } from "../storage/AlertsStore"
import { EmailStore } from "../storage/EmailStore"
import { emailsQueued as emailsQueuedMetric, jobsDone } from "../domain/metrics"

/**
 * Records the lists a notification matches (digests use them), stores what its immediate emails share, and writes one
 * email per immediate subscriber (their unsubscribe lines), chunk by chunk of subscriber ids. Safe to run again after a crash or a retry: subscribers with an email are skipped.
 * Returns how many emails it created.
 */
export const fanOutNotification = (
  notificationId: string,
  settings: DeliverySettings,
  /** Told after each chunk that wrote emails (to wake the delivery worker). */
  emailsQueued: Effect.Effect<void> = Effect.void
) =>
  Effect.gen(function*() {
    const emails = yield* EmailStore
    const alerts = yield* AlertsStore
    const found = yield* emails.notification(notificationId)
    if (Option.isNone(found)) {
      yield* Effect.logWarning(`No notification ${notificationId} to fan out`)
      return 0
    }
    const notification = found.value
    const listIds = yield* alerts.matchingListIds(notification)
    yield* emails.recordMatches(notificationId, listIds)
    if (listIds.length === 0) return 0
    const { unsubscribeUrlPrefix, ...shared } = immediateEmailContent(notification, settings)
    yield* emails.storeContent(notificationId, shared)
    // only the ids of the matched lists' subscribers: a notification to a small list costs a chunk, not one per
    // thousand subscribers of the whole service
    const range = yield* emails.immediateSubscriberRange(notificationId)
    const [first, last] = Option.match(range, { onNone: () => [0, 0], onSome: ({ highest, lowest }) => [lowest - 1, highest] })
    const starts = Array.from(
      { length: Math.ceil((last - first) / settings.fanOutChunkSize) },
      (_, i) => first + i * settings.fanOutChunkSize
    )
    const counts = yield* Effect.forEach(starts, (after) =>
      emails.fanOutChunk({
        notificationId,
        afterSubscriberId: after,
        throughSubscriberId: after + settings.fanOutChunkSize,
        unsubscribeUrlPrefix
      }).pipe(Effect.tap((created) => created > 0 ? emailsQueued : Effect.void)), { concurrency: settings.fanOutChunkConcurrency })
    const created = counts.reduce((sum, count) => sum + count, 0)
    yield* Metric.incrementBy(Metric.tagged(emailsQueuedMetric, "kind", "immediate"), created)
    yield* Metric.increment(Metric.tagged(jobsDone, "kind", "fan_out"))
    yield* Effect.logDebug(`Notification ${notificationId} matched ${listIds.length} list(s); ${created} email(s) queued`)
    return created
  })

/** Fans out the notifications of `fanOutJob` until interrupted. */
export const runFanOutWorker = (settings: DeliverySettings, emailsQueued: Effect.Effect<void> = Effect.void) =>
  runWorker(fanOutJob, ({ notificationId }) => fanOutNotification(notificationId, settings, emailsQueued), {
    concurrency: settings.fanOutConcurrency,
    pollInterval: settings.pollInterval,
    shutdownGracePeriod: settings.shutdownGracePeriod
  })
