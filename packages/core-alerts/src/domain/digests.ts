import { Cron, Either } from "effect"
import type { DeliverySettings } from "../settings"
import { escapeLinkText, unsubscribeLine } from "./bodyParts"
import { notificationMarkdown, notificationSubject } from "./compose"
import { byCodeUnit } from "./criteria"
import { unsubscribeUrlPrefix } from "./links"
import type { Notification } from "./records"

export type DigestFrequency = "daily" | "weekly"

export interface DigestWindow {
  readonly frequency: DigestFrequency
  /** Notifications recorded at or after `start` and before `end`. */
  readonly start: Date
  readonly end: Date
}

export interface DigestRun extends DigestWindow {
  readonly id: string
  readonly completedAt: Date | null
}

/** One notification for one active subscription at the window's frequency, through a list the notification matched. */
export interface DigestEntry {
  readonly subscriberId: number
  readonly address: string
  readonly subscriptionId: string
  readonly listTitle: string
  readonly notificationId: string
}

export interface NewDigestEmail {
  readonly subscriberId: number
  readonly address: string
  readonly subject: string
  readonly body: string
  readonly subscriptionIds: ReadonlyArray<string>
}

/** Where windows end: every day, or every Saturday, at 08:00. */
const WINDOW_ENDS: Record<DigestFrequency, string> = { daily: "0 8 * * *", weekly: "0 8 * * 6" }
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

/**
 * The windows of `frequency` that ended after `after` and at or before `now`, oldest first: those whose digests are
 * due. With nothing run before (`after` null), only the last one.
 */
export const digestWindowsDue = (
  frequency: DigestFrequency,
  after: Date | null,
  now: Date,
  timeZone: string
): ReadonlyArray<DigestWindow> => {
  const last = lastDigestWindow(frequency, now, timeZone)
  if (after === null) return [last]
  const due: Array<DigestWindow> = []
  for (let window = last; window.end.getTime() > after.getTime(); window = lastDigestWindow(frequency, window.start, timeZone)) {
    due.push(window)
  }
  return due.reverse()
}

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
