import { now } from "@civicstack/kit"
import type { Context } from "effect"
import { Duration, Effect, Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import { UNSUBSCRIBE_SEPARATOR, unsubscribeLine } from "../../domain/bodyParts"
import type { SharedEmailContent } from "../../domain/compose"
import { immediateEmailBody } from "../../domain/compose"
import { byCodeUnit } from "../../domain/criteria"
import type { StoredDeliveryReport } from "../../domain/deliveryStatus"
import type { DigestEntry, DigestRun } from "../../domain/digests"
import { AlertsStore } from "../AlertsStore"
import type { ClaimedBody, ClaimedEmail, EmailClaim, StoredEmail } from "../EmailStore"
import { EmailStore } from "../EmailStore"
import { memoryTablesOf } from "./subscriptions"

type Service = Context.Tag.Service<EmailStore>

interface EmailRow {
  id: string
  address: string
  /** Null (with `body`) on a notification's email: its notification's shared content says it. */
  subject: string | null
  body: string | null
  unsubscribeLines: string | null
  status: StoredEmail["status"]
  attempts: number
  nextAttemptAt: Date
  claimedUntil: Date | null
  failureReason: string | null
  notificationId: string | null
  subscriberId: number | null
  digestRunId: string | null
  subscriptionIds: ReadonlyArray<string>
  createdAt: Date
  updatedAt: Date
  sentAt: Date | null
}

interface ContentRow {
  readonly content: SharedEmailContent
  fannedOutAt: Date
}

const claimedBody = (row: EmailRow): ClaimedBody =>
  row.body === null && row.unsubscribeLines !== null && row.notificationId !== null
    ? { _tag: "AroundSharedContent", notificationId: row.notificationId, unsubscribeLines: row.unsubscribeLines }
    : { _tag: "Whole", text: row.body ?? "" }

const stored = (row: EmailRow, content: SharedEmailContent | undefined): StoredEmail => ({
  id: row.id,
  address: row.address,
  subject: row.subject ?? content?.subject ?? "",
  body: row.body ??
    (row.unsubscribeLines === null || content === undefined ? null : immediateEmailBody(content, row.unsubscribeLines)),
  status: row.status,
  attempts: row.attempts,
  nextAttemptAt: row.nextAttemptAt,
  failureReason: row.failureReason,
  notificationId: row.notificationId,
  subscriberId: row.subscriberId,
  digestRunId: row.digestRunId,
  subscriptionIds: row.subscriptionIds,
  createdAt: row.createdAt,
  sentAt: row.sentAt
})

/** Over the tables of the memory `AlertsStore`; each operation reads the clock, then changes the rows synchronously. */
const makeMemoryEmailStore = Effect.gen(function*() {
  const alerts = yield* AlertsStore
  const tables = yield* Option.match(memoryTablesOf(alerts), {
    onNone: () => Effect.dieMessage("the memory email store needs the memory AlertsStore of the same process"),
    onSome: Effect.succeed
  })
  const emails = new Map<string, EmailRow>()
  const contents = new Map<string, ContentRow>()
  const matches = new Map<string, ReadonlySet<number>>()
  /** By email id; deleted with their email. */
  const reports = new Map<string, Array<StoredDeliveryReport>>()
  const digestRuns: Array<DigestRun> = []

  const atNow = <A>(change: (at: Date) => A) => Effect.flatMap(now, (at) => Effect.sync(() => change(at)))

  /** The row, when the claim still holds it. */
  const held = (claim: EmailClaim) => {
    const row = emails.get(claim.id)
    return row !== undefined && row.status === "sending" && row.attempts === claim.attempt ? row : undefined
  }

  const storedEmail = (row: EmailRow) =>
    stored(row, row.notificationId === null ? undefined : contents.get(row.notificationId)?.content)

  const newRow = (fields: Pick<EmailRow, "address" | "subject" | "body">, at: Date): EmailRow => ({
    id: randomUUID(),
    ...fields,
    unsubscribeLines: null,
    status: "pending",
    attempts: 0,
    nextAttemptAt: at,
    claimedUntil: null,
    failureReason: null,
    notificationId: null,
    subscriberId: null,
    digestRunId: null,
    subscriptionIds: [],
    createdAt: at,
    updatedAt: at,
    sentAt: null
  })

  const store: Service = {
    notification: (id) => Effect.sync(() => Option.fromNullable(tables.notifications.find((n) => n.id === id))),
    recordMatches: (notificationId, listIds) =>
      Effect.sync(() => {
        matches.set(notificationId, new Set([...(matches.get(notificationId) ?? []), ...listIds]))
      }),
    storeContent: (notificationId, content) =>
      atNow((at) => {
        const existing = contents.get(notificationId)
        if (existing === undefined) contents.set(notificationId, { content, fannedOutAt: at })
        else existing.fannedOutAt = at
      }),
    contentsOf: (notificationIds) =>
      Effect.sync(() =>
        new Map(notificationIds.flatMap((id) => {
          const found = contents.get(id)
          return found === undefined ? [] : [[id, found.content] as const]
        }))
      ),
    highestSubscriberId: Effect.sync(() => Math.max(0, ...tables.subscribers.keys())),
    immediateSubscriberRange: (notificationId) =>
      Effect.sync(() => {
        const listIds = matches.get(notificationId) ?? new Set<number>()
        const ids = [...tables.subscriptions.values()]
          .filter((s) => s.endedAt === null && s.frequency === "immediately" && listIds.has(s.subscriberListId))
          .map((s) => s.subscriberId)
        return ids.length === 0 ? Option.none() : Option.some({ lowest: Math.min(...ids), highest: Math.max(...ids) })
      }),
    fanOutChunk: ({ afterSubscriberId, notificationId, throughSubscriberId, unsubscribeUrlPrefix }) =>
      atNow((at) => {
        if (!contents.has(notificationId)) return 0
        const listIds = matches.get(notificationId) ?? new Set<number>()
        const reached = new Map<number, Array<{ readonly id: string; readonly title: string }>>()
        for (const subscription of tables.subscriptions.values()) {
          if (
            subscription.endedAt !== null || subscription.frequency !== "immediately" ||
            !listIds.has(subscription.subscriberListId) ||
            subscription.subscriberId <= afterSubscriberId || subscription.subscriberId > throughSubscriberId
          ) continue
          const title = tables.lists.get(subscription.subscriberListId)!.title
          reached.set(subscription.subscriberId, [
            ...(reached.get(subscription.subscriberId) ?? []),
            { id: subscription.id, title }
          ])
        }
        const existing = new Set(
          [...emails.values()].filter((row) => row.notificationId === notificationId).map((row) => row.subscriberId)
        )
        let created = 0
        for (const [subscriberId, subscriptions] of reached) {
          const subscriber = tables.subscribers.get(subscriberId)!
          if (subscriber.deactivatedAt !== null || existing.has(subscriberId)) continue
          subscriptions.sort((a, b) => byCodeUnit(a.title, b.title) || byCodeUnit(a.id, b.id))
          const links = subscriptions.map((s) => unsubscribeLine(s.title, `${unsubscribeUrlPrefix}${s.id}`))
          const row = newRow({ address: subscriber.address, subject: null, body: null }, at)
          emails.set(row.id, {
            ...row,
            unsubscribeLines: links.join(UNSUBSCRIBE_SEPARATOR),
            notificationId,
            subscriberId,
            subscriptionIds: subscriptions.map((s) => s.id).sort(byCodeUnit)
          })
          created++
        }
        return created
      }),
    queueEmail: (email) =>
      atNow((at) => {
        const row = newRow(email, at)
        emails.set(row.id, row)
        return row.id
      }),
    singleEmailsSince: (address, subject, since) =>
      Effect.sync(() => {
        const found = [...emails.values()].filter((row) =>
          row.address === address && row.subject === subject && row.createdAt > since && row.notificationId === null &&
          row.digestRunId === null
        )
        const oldest = found.reduce<Date | null>((min, row) => (min === null || row.createdAt < min ? row.createdAt : min), null)
        return { count: found.length, oldest }
      }),
    claim: (limit, lease) =>
      atNow((at) => {
        const until = new Date(at.getTime() + Duration.toMillis(lease))
        const due = [...emails.values()]
          .filter((row) => (row.status === "pending" || row.status === "sending") && row.nextAttemptAt <= at)
          .sort((a, b) => a.nextAttemptAt.getTime() - b.nextAttemptAt.getTime())
          .slice(0, limit)
        return due.map((row): ClaimedEmail => {
          row.status = "sending"
          row.attempts += 1
          row.claimedUntil = until
          row.nextAttemptAt = until
          row.updatedAt = at
          return {
            id: row.id,
            address: row.address,
            subject: row.subject ?? contents.get(row.notificationId ?? "")?.content.subject ?? "",
            body: claimedBody(row),
            attempt: row.attempts,
            subscriptionIds: row.subscriptionIds
          }
        })
      }),
    markSent: (claim) =>
      atNow((at) => {
        const row = held(claim)
        if (row === undefined) return false
        Object.assign(row, { status: "sent", claimedUntil: null, sentAt: at, updatedAt: at })
        return true
      }),
    markSentMany: (claims) =>
      atNow((at) => {
        let marked = 0
        for (const claim of claims) {
          const row = held(claim)
          if (row === undefined) continue
          Object.assign(row, { status: "sent", claimedUntil: null, sentAt: at, updatedAt: at })
          marked++
        }
        return marked
      }),
    markTemporaryFailure: (claim, { maxAttempts, reason, retryAt }) =>
      atNow((at) => {
        const row = held(claim)
        if (row === undefined) return "lost" as const
        const failed = row.attempts >= maxAttempts
        Object.assign(row, {
          status: failed ? "failed" : "pending",
          nextAttemptAt: failed ? row.nextAttemptAt : retryAt,
          claimedUntil: null,
          failureReason: reason,
          updatedAt: at
        })
        return failed ? "failed" as const : "retrying" as const
      }),
    markPermanentFailure: (claim, reason) =>
      atNow((at) => {
        const row = held(claim)
        if (row === undefined) return false
        Object.assign(row, { status: "failed", claimedUntil: null, failureReason: reason, updatedAt: at })
        return true
      }),
    expireClaims: atNow((at) => {
      let expired = 0
      for (const row of emails.values()) {
        if (row.status !== "sending" || row.nextAttemptAt <= at) continue
        row.claimedUntil = at
        row.nextAttemptAt = at
        expired++
      }
      return expired
    }),
    release: (claims) =>
      atNow((at) => {
        for (const claim of claims) {
          const row = held(claim)
          if (row === undefined) continue
          Object.assign(row, {
            status: "pending",
            attempts: row.attempts - 1,
            nextAttemptAt: at,
            claimedUntil: null,
            updatedAt: at
          })
        }
      }),
    figures: Effect.sync(() => {
      let waiting = 0
      let oldest: Date | null = null
      for (const row of emails.values()) {
        if (row.status === "pending" || row.status === "sending") waiting++
        if (row.status === "pending" && row.digestRunId === null && (oldest === null || row.createdAt < oldest)) {
          oldest = row.createdAt
        }
      }
      return { waiting, oldestImmediatePendingSince: oldest }
    }),
    statusFigures: Effect.sync(() => {
      const counts = { pending: 0, sending: 0, sent: 0, failed: 0 }
      let oldestPendingSince: Date | null = null
      for (const row of emails.values()) {
        counts[row.status]++
        if (row.status === "pending" && (oldestPendingSince === null || row.createdAt < oldestPendingSince)) {
          oldestPendingSince = row.createdAt
        }
      }
      return { counts, oldestPendingSince }
    }),
    prune: ({ blankBodiesAfter, deleteAfter }) =>
      atNow((at) => {
        const blankBefore = at.getTime() - Duration.toMillis(blankBodiesAfter)
        const deleteBefore = at.getTime() - Duration.toMillis(deleteAfter)
        let blanked = 0
        let deleted = 0
        for (const row of [...emails.values()]) {
          if (row.status !== "sent" && row.status !== "failed") continue
          if (row.createdAt.getTime() < deleteBefore) {
            emails.delete(row.id)
            reports.delete(row.id)
            deleted++
          } else if (row.createdAt.getTime() < blankBefore && (row.body !== null || row.unsubscribeLines !== null)) {
            row.body = null
            row.unsubscribeLines = null
            blanked++
          }
        }
        const referred = new Set([...emails.values()].map((row) => row.notificationId))
        let contentsDeleted = 0
        for (const [notificationId, { fannedOutAt }] of contents) {
          if (fannedOutAt.getTime() >= blankBefore || referred.has(notificationId)) continue
          contents.delete(notificationId)
          contentsDeleted++
        }
        return { blanked, deleted, contentsDeleted }
      }),
    startDigestRun: (window) =>
      atNow(() => {
        const existing = digestRuns.find((run) =>
          run.frequency === window.frequency && run.end.getTime() === window.end.getTime()
        )
        if (existing !== undefined) return existing
        const run: DigestRun = { ...window, id: randomUUID(), completedAt: null }
        digestRuns.push(run)
        return run
      }),
    completeDigestRun: (id) =>
      atNow((at) => {
        const index = digestRuns.findIndex((run) => run.id === id)
        if (index >= 0 && digestRuns[index]!.completedAt === null) digestRuns[index] = { ...digestRuns[index]!, completedAt: at }
      }),
    digestRunsToResume: (frequency) =>
      Effect.sync(() => {
        const runs = digestRuns.filter((run) => run.frequency === frequency).sort((a, b) => a.end.getTime() - b.end.getTime())
        return runs.filter((run, index) => run.completedAt === null || index === runs.length - 1)
      }),
    notificationsIn: ({ end, start }) =>
      Effect.sync(() =>
        tables.notifications
          .filter((n) => n.createdAt >= start && n.createdAt < end)
          .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || byCodeUnit(a.id, b.id))
      ),
    digestEntries: ({ end, frequency, start }, { afterSubscriberId, throughSubscriberId }) =>
      Effect.sync(() => {
        const inWindow = tables.notifications.filter((n) => n.createdAt >= start && n.createdAt < end)
        const entries: Array<DigestEntry> = []
        for (const subscription of tables.subscriptions.values()) {
          const subscriber = tables.subscribers.get(subscription.subscriberId)!
          if (
            subscription.endedAt !== null || subscription.frequency !== frequency || subscriber.deactivatedAt !== null ||
            subscriber.id <= afterSubscriberId || subscriber.id > throughSubscriberId
          ) continue
          for (const notification of inWindow) {
            if (!matches.get(notification.id)?.has(subscription.subscriberListId)) continue
            entries.push({
              subscriberId: subscriber.id,
              address: subscriber.address,
              subscriptionId: subscription.id,
              listTitle: tables.lists.get(subscription.subscriberListId)!.title,
              notificationId: notification.id
            })
          }
        }
        return entries
      }),
    insertDigestEmails: (runId, digests) =>
      atNow((at) => {
        const reached = new Set(
          [...emails.values()].filter((row) => row.digestRunId === runId).map((row) => row.subscriberId)
        )
        let created = 0
        for (const digest of digests) {
          if (reached.has(digest.subscriberId)) continue
          reached.add(digest.subscriberId)
          const row = newRow({ address: digest.address, subject: digest.subject, body: digest.body }, at)
          emails.set(row.id, {
            ...row,
            digestRunId: runId,
            subscriberId: digest.subscriberId,
            subscriptionIds: [...digest.subscriptionIds].sort(byCodeUnit)
          })
          created++
        }
        return created
      }),
    emailsOfDigestRun: (runId) =>
      Effect.sync(() =>
        [...emails.values()]
          .filter((row) => row.digestRunId === runId)
          .sort((a, b) => (a.subscriberId ?? 0) - (b.subscriberId ?? 0))
          .map(storedEmail)
      ),
    email: (id) => Effect.sync(() => Option.map(Option.fromNullable(emails.get(id)), storedEmail)),
    recordDeliveryReport: (report) =>
      Effect.map(now, (receivedAt) => {
        const email = emails.get(report.emailId)
        if (email === undefined || email.address.toLowerCase() !== report.address.toLowerCase()) return "unknown"
        const kept = reports.get(email.id) ?? []
        const same = (other: StoredDeliveryReport) =>
          other.source === report.source && other.providerId === report.providerId && other.status === report.status
        if (kept.some(same)) return "repeated"
        const { address: _address, emailId: _emailId, ...rest } = report
        reports.set(email.id, [...kept, { ...rest, receivedAt }])
        return "recorded"
      }),
    deliveryReportsOf: (emailId) => Effect.sync(() => reports.get(emailId) ?? []),
    emailsOfNotification: (notificationId) =>
      Effect.sync(() =>
        [...emails.values()]
          .filter((row) => row.notificationId === notificationId)
          .sort((a, b) => (a.subscriberId ?? 0) - (b.subscriberId ?? 0))
          .map(storedEmail)
      )
  }
  return store
})

/** Emails in this process, over the memory `AlertsStore` (`subscriptionsMemory`) it is built with. */
export const emailsMemory: Layer.Layer<EmailStore, never, AlertsStore> = Layer.effect(EmailStore, makeMemoryEmailStore)
