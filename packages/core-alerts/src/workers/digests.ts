import { runWorker } from "@civicstack/jobs"
import type { RecurringSchedule } from "@civicstack/jobs"
import { now as currentDate } from "@civicstack/kit"
import { Effect, Metric } from "effect"
import type { DigestEntry, DigestFrequency, DigestWindow } from "../domain/digests"
import { composeDigest, digestWindowsDue } from "../domain/digests"
import { digestJob } from "../domain/jobs"
import type { DeliverySettings } from "../settings"
import { EmailStore } from "../storage/EmailStore"
import { emailsQueued as emailsQueuedMetric, jobsDone } from "../domain/metrics"

/** When each digest is sent: half an hour after its window ends. */
const SENDING_TIMES: Record<DigestFrequency, string> = { daily: "30 8 * * *", weekly: "30 8 * * 6" }

export const digestSchedules = (settings: DeliverySettings): ReadonlyArray<RecurringSchedule<any, any>> =>
  (["daily", "weekly"] as const).map((frequency) => ({
    name: `alerts.digest.${frequency}`,
    cron: SENDING_TIMES[frequency],
    timeZone: settings.scheduleTimeZone,
    definition: digestJob,
    payload: { frequency }
  }))

/**
 * The digests of one window: one email per subscriber with anything in it. The run is recorded once per window; a
 * run that completed sends nothing again, and one that stopped half-way carries on without writing a second email to
 * anyone. Returns how many emails it created.
 */
const sendDigestsOf = (window: DigestWindow, settings: DeliverySettings, emailsQueued: Effect.Effect<void>) =>
  Effect.gen(function*() {
    const emails = yield* EmailStore
    const { frequency } = window
    const run = yield* emails.startDigestRun(window)
    if (run.completedAt !== null) return 0
    const notifications = new Map((yield* emails.notificationsIn(window)).map((n) => [n.id, n] as const))
    const highest = yield* emails.highestSubscriberId
    let created = 0
    if (notifications.size > 0) {
      for (let after = 0; after < highest; after += settings.fanOutChunkSize) {
        const entries = yield* emails.digestEntries(window, {
          afterSubscriberId: after,
          throughSubscriberId: after + settings.fanOutChunkSize
        })
        const bySubscriber = new Map<number, Array<DigestEntry>>()
        for (const entry of entries) {
          bySubscriber.set(entry.subscriberId, [...(bySubscriber.get(entry.subscriberId) ?? []), entry])
        }
        const digests = [...bySubscriber.values()].map((own) => composeDigest(frequency, own, notifications, settings))
        const inserted = yield* emails.insertDigestEmails(run.id, digests)
        if (inserted > 0) yield* emailsQueued
        created += inserted
      }
    }
    yield* emails.completeDigestRun(run.id)
    yield* Metric.incrementBy(Metric.tagged(emailsQueuedMetric, "kind", frequency), created)
    yield* Metric.increment(Metric.tagged(jobsDone, "kind", `${frequency}_digest`))
    yield* Effect.logInfo(`The ${frequency} digest to ${window.end.toISOString()}: ${created} email(s)`)
    return created
  })

/**
 * Sends the digests of every window of `frequency` that is due and was not sent, however late, oldest first, each
 * with its own window's content: the runs that stopped half-way, then each window that ended after the latest run
 * (after an outage, all those it missed). With no run recorded yet, only the last window. Returns how many emails it
 * created.
 */
export const sendDigests = (
  frequency: DigestFrequency,
  settings: DeliverySettings,
  /** Told after each chunk that wrote emails (to wake the delivery workers). */
  emailsQueued: Effect.Effect<void> = Effect.void
) =>
  Effect.gen(function*() {
    const emails = yield* EmailStore
    const now = yield* currentDate
    const runs = yield* emails.digestRunsToResume(frequency)
    const windows = [
      ...runs.filter((run) => run.completedAt === null),
      ...digestWindowsDue(frequency, runs.at(-1)?.end ?? null, now, settings.scheduleTimeZone)
    ]
    let created = 0
    for (const window of windows) created += yield* sendDigestsOf(window, settings, emailsQueued)
    return created
  })

export const runDigestWorker = (settings: DeliverySettings, emailsQueued: Effect.Effect<void> = Effect.void) =>
  runWorker(digestJob, ({ frequency }) => sendDigests(frequency, settings, emailsQueued), {
    pollInterval: settings.pollInterval,
    shutdownGracePeriod: settings.shutdownGracePeriod
  })
