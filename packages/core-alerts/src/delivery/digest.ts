import { JobDefinition, runWorker } from "@civicstack/jobs"
import type { RecurringSchedule } from "@civicstack/jobs"
import { Clock, Cron, Either, Effect, Schema } from "effect"
import { byCodeUnit } from "../domain/criteria"
import type { Notification } from "../domain/records"
import { notificationMarkdown, notificationSubject } from "./compose"
import type { DigestEntry, DigestFrequency, DigestWindow, NewDigestEmail } from "./EmailStore"
import { EmailStore } from "./EmailStore"
import type { DeliverySettings } from "./settings"
import { unsubscribeUrlPrefix } from "./settings"
import { escapeLinkText, unsubscribeLine } from "./storage/bodyParts"

const Frequency = Schema.Literal("daily", "weekly")

/** Sends the digests of the window that ended last (at 08:00); enqueued by the digest schedules at 08:30. */
export const digestJob = JobDefinition.make({
  queue: "alerts.digest",
  payload: Schema.Struct({ frequency: Frequency }),
  maxAttempts: 25,
  backoff: { base: "5 seconds", max: "10 minutes" },
  leaseDuration: "5 minutes"
})

/** Where windows end: every day, or every Saturday, at 08:00. */
const WINDOW_ENDS: Record<DigestFrequency, string> = { daily: "0 8 * * *", weekly: "0 8 * * 6" }
/** When each digest is sent: half an hour after its window ends. */
const SENDING_TIMES: Record<DigestFrequency, string> = { daily: "30 8 * * *", weekly: "30 8 * * 6" }
/** A window that ended longer ago than this is not sent any more (e.g. when a job runs late after a long outage). */
const LATEST_SENDING_MILLIS = 24 * 60 * 60 * 1000
/** Longer than a week, so that the last two window ends of either frequency are among the slots after it. */
const LOOK_BACK_MILLIS = 16 * 24 * 60 * 60 * 1000

const cronIn = (expression: string, timeZone: string) =>
  Either.getOrThrowWith(Cron.parse(expression, timeZone), (error) => new Error(error.message))

/**
 * The last window of `frequency` that ended at or before `now`, in `timeZone`: from one 08:00 (daily, or Saturday for
 * weekly) to the next, so a window across a change of the clocks is an hour shorter or longer.
 */
export const lastDigestWindow = (frequency: DigestFrequency, now: Date, timeZone: string): DigestWindow => {
  const cron = cronIn(WINDOW_ENDS[frequency], timeZone)
  // walks forward with `Cron.next` (strictly after its start): `Cron.prev` fails for day-of-week expressions
  let start = Cron.next(cron, new Date(now.getTime() - LOOK_BACK_MILLIS))
  let end = Cron.next(cron, start)
  for (let next = Cron.next(cron, end); next.getTime() <= now.getTime(); next = Cron.next(cron, end)) {
    start = end
    end = next
  }
  return { frequency, start, end }
}

export const digestSchedules = (settings: DeliverySettings): ReadonlyArray<RecurringSchedule<any, any>> =>
  (["daily", "weekly"] as const).map((frequency) => ({
    name: `alerts.digest.${frequency}`,
    cron: SENDING_TIMES[frequency],
    timeZone: settings.scheduleTimeZone,
    definition: digestJob,
    payload: { frequency }
  }))

const digestSubject = (frequency: DigestFrequency) =>
  frequency === "daily" ? "Your daily update" : "Your weekly update"

/**
 * One subscriber's digest: a section per subscription (by list title) with its notifications (oldest first), each
 * section ending with its unsubscribe link.
 */
export const composeDigest = (
  frequency: DigestFrequency,
  entries: ReadonlyArray<DigestEntry>,
  notifications: ReadonlyMap<string, Notification>,
  settings: Pick<DeliverySettings, "publicSiteUrl" | "footer">
): NewDigestEmail => {
  const first = entries[0]!
  const sections = new Map<string, { readonly title: string; readonly notifications: Array<Notification> }>()
  for (const entry of entries) {
    const section = sections.get(entry.subscriptionId) ?? { title: entry.listTitle, notifications: [] }
    section.notifications.push(notifications.get(entry.notificationId)!)
    sections.set(entry.subscriptionId, section)
  }
  const ordered = [...sections.entries()].sort(([idA, a], [idB, b]) => byCodeUnit(a.title, b.title) || byCodeUnit(idA, idB))
  const prefix = unsubscribeUrlPrefix(settings)
  const body = ordered.map(([subscriptionId, section]) => {
    const items = section.notifications
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || byCodeUnit(a.id, b.id))
      .map((notification) => `### ${notificationSubject(notification)}\n\n${notificationMarkdown(notification, settings)}`)
    return [`## ${escapeLinkText(section.title)}`, ...items, unsubscribeLine(section.title, `${prefix}${subscriptionId}`)]
      .join("\n\n")
  })
  return {
    subscriberId: first.subscriberId,
    address: first.address,
    subject: digestSubject(frequency),
    body: [...body, "---", settings.footer].join("\n\n"),
    subscriptionIds: ordered.map(([subscriptionId]) => subscriptionId)
  }
}

/**
 * Sends the digests of the window of `frequency` that ended last, unless it ended more than a day ago: one email per
 * subscriber with anything in it. The run is recorded once per window; a run that completed sends nothing again, and one that stopped half-way carries on
 * without writing a second email to anyone. Returns how many emails it created.
 */
export const sendDigests = (frequency: DigestFrequency, settings: DeliverySettings) =>
  Effect.gen(function*() {
    const emails = yield* EmailStore
    const now = new Date(yield* Clock.currentTimeMillis)
    const window = lastDigestWindow(frequency, now, settings.scheduleTimeZone)
    if (now.getTime() - window.end.getTime() > LATEST_SENDING_MILLIS) return 0
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
        created += yield* emails.insertDigestEmails(run.id, digests)
      }
    }
    yield* emails.completeDigestRun(run.id)
    yield* Effect.logInfo(`The ${frequency} digest to ${window.end.toISOString()}: ${created} email(s)`)
    return created
  })

export const runDigestWorker = (settings: DeliverySettings) =>
  runWorker(digestJob, ({ frequency }) => sendDigests(frequency, settings), {
    pollInterval: settings.pollInterval,
    shutdownGracePeriod: settings.shutdownGracePeriod
  })
