import { Context } from "effect"
import type { Duration, Effect, Option } from "effect"
import type { StoreError } from "@civicstack/kit"
import type { SharedEmailContent } from "../domain/compose"
import type { DeliveryReport, DeliveryReportOutcome, StoredDeliveryReport } from "../domain/deliveryStatus"
import type { DigestEntry, DigestFrequency, DigestRun, DigestWindow, NewDigestEmail } from "../domain/digests"
import type { Notification } from "../domain/records"
import type { Retention } from "../settings"

/** A message that is not the fan-out of a notification or a digest (e.g. the auth-token email). */
export interface SingleEmail {
  readonly address: string
  readonly subject: string
  /** Markdown. */
  readonly body: string
}

export type EmailStatus = "pending" | "sending" | "sent" | "failed"

export interface FanOutChunk {
  readonly notificationId: string
  /** Subscribers with an id above this and at most `throughSubscriberId` are reached by this chunk. */
  readonly afterSubscriberId: number
  readonly throughSubscriberId: number
  /** The subscription's id is appended to make its unsubscribe link. */
  readonly unsubscribeUrlPrefix: string
}

/**
 * The body of a claimed email: its whole text (single and digest emails, and notification emails stored before
 * migration 7), or the subscriber's unsubscribe lines, which go inside the notification's shared content
 * (`contentsOf`, `immediateEmailBody`).
 */
export type ClaimedBody =
  | { readonly _tag: "Whole"; readonly text: string }
  | { readonly _tag: "AroundSharedContent"; readonly notificationId: string; readonly unsubscribeLines: string }

/** An email leased to one worker. `attempt` (1 on the first claim) is the claim's proof of ownership. */
export interface ClaimedEmail {
  readonly id: string
  readonly address: string
  readonly subject: string
  readonly body: ClaimedBody
  readonly attempt: number
  /** The subscriptions the email is about (ascending); empty for a single email. */
  readonly subscriptionIds: ReadonlyArray<string>
}

export interface EmailClaim {
  readonly id: string
  readonly attempt: number
}

export interface StoredEmail {
  readonly id: string
  readonly address: string
  readonly subject: string
  /** The whole text, shared content included; null once the retention period blanked it. */
  readonly body: string | null
  readonly status: EmailStatus
  readonly attempts: number
  readonly nextAttemptAt: Date
  readonly failureReason: string | null
  readonly notificationId: string | null
  readonly subscriberId: number | null
  readonly digestRunId: string | null
  readonly subscriptionIds: ReadonlyArray<string>
  readonly createdAt: Date
  readonly sentAt: Date | null
}

export interface EmailFigures {
  /** Pending or being sent. */
  readonly waiting: number
  /** Creation time of the oldest pending email that is not part of a digest. */
  readonly oldestImmediatePendingSince: Date | null
}

export interface EmailStatusFigures {
  /** How many emails have each status now (sent and failed ones until retention deletes them). */
  readonly counts: Readonly<Record<EmailStatus, number>>
  /** Creation time of the oldest pending email, digests included; null when none is pending. */
  readonly oldestPendingSince: Date | null
}

export interface PruneOutcome {
  /** Finished emails whose bodies were blanked. */
  readonly blanked: number
  /** Finished emails deleted. */
  readonly deleted: number
  /** Notifications' shared contents that no email refers to any more, deleted. */
  readonly contentsDeleted: number
}

/** What a temporary failure did: the email waits for another attempt, or it ran out of attempts and failed. */
export type TemporaryFailureOutcome = "retrying" | "failed" | "lost"

/**
 * Email rows: fan-out writes them, the delivery worker claims and settles them, retention prunes them. Memory and SQL
 * adapters pass one shared suite. Every operation takes its time from `Clock`.
 */
export class EmailStore extends Context.Tag("@civicstack/core-alerts/EmailStore")<EmailStore, {
  readonly notification: (id: string) => Effect.Effect<Option.Option<Notification>, StoreError>
  /** Records the lists a notification matched; recording them again changes nothing. */
  readonly recordMatches: (notificationId: string, listIds: ReadonlyArray<number>) => Effect.Effect<void, StoreError>
  /** The highest subscriber id there is (0 when none): fan-out walks the ids up to it in chunks. */
  readonly highestSubscriberId: Effect.Effect<number, StoreError>
  /**
   * The lowest and highest ids of the subscribers with an active `immediately` subscription to a list the
   * notification matched (`recordMatches`): fan-out walks only that range. None when there is no such subscriber.
   */
  readonly immediateSubscriberRange: (
    notificationId: string
  ) => Effect.Effect<Option.Option<{ readonly lowest: number; readonly highest: number }>, StoreError>
  /**
   * Stores what every immediate email of the notification says, once: when it is stored already (fan-out ran
   * before), that content is kept, so that all the notification's emails say the same, and is marked as in use now.
   */
  readonly storeContent: (notificationId: string, content: SharedEmailContent) => Effect.Effect<void, StoreError>
  /** The stored contents of these notifications, by notification id; the ones with none are left out. */
  readonly contentsOf: (
    notificationIds: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyMap<string, SharedEmailContent>, StoreError>
  /**
   * One pending email per active subscriber in the chunk with an `immediately` subscription to a list the
   * notification matched, holding the subscriber's unsubscribe line for each such subscription and referring to the
   * notification's content (`storeContent` first: without it nothing is written); subscribers who have one already
   * are skipped. Returns how many emails it created.
   */
  readonly fanOutChunk: (chunk: FanOutChunk) => Effect.Effect<number, StoreError>
  /** A pending email about no subscription; returns its id. */
  readonly queueEmail: (email: SingleEmail) => Effect.Effect<string, StoreError>
  /** How many emails about no subscription with this subject were queued to `address` after `since`, and the oldest's time. */
  readonly singleEmailsSince: (
    address: string,
    subject: string,
    since: Date
  ) => Effect.Effect<{ readonly count: number; readonly oldest: Date | null }, StoreError>
  /**
   * Leases up to `limit` emails that are due (pending and past their next attempt, or sending with an expired lease),
   * oldest due first, counting an attempt for each.
   */
  readonly claim: (limit: number, lease: Duration.Duration) => Effect.Effect<ReadonlyArray<ClaimedEmail>, StoreError>
  /** The settling operations change nothing when the claim is stale (the lease ran out and the email moved on). */
  readonly markSent: (claim: EmailClaim) => Effect.Effect<boolean, StoreError>
  /**
   * `markSent` for many claims in one statement (the delivery worker records a batch's sends at once). Claims that
   * no longer hold change nothing, as with `markSent`; answers how many emails were marked.
   */
  readonly markSentMany: (claims: ReadonlyArray<EmailClaim>) => Effect.Effect<number, StoreError>
  /** Pending again at `retryAt`, unless this was attempt `maxAttempts` or later: then failed. */
  readonly markTemporaryFailure: (
    claim: EmailClaim,
    failure: { readonly reason: string; readonly retryAt: Date; readonly maxAttempts: number }
  ) => Effect.Effect<TemporaryFailureOutcome, StoreError>
  readonly markPermanentFailure: (claim: EmailClaim, reason: string) => Effect.Effect<boolean, StoreError>
  /**
   * Ends every lease now, so the claimed emails are due at once (their attempt still counts). For a database only one
   * process uses, at its start: every claim then belongs to a process that stopped. Answers how many there were.
   */
  readonly expireClaims: Effect.Effect<number, StoreError>
  /** Hands claimed emails back unsent, due now, without counting the attempt. */
  readonly release: (claims: ReadonlyArray<EmailClaim>) => Effect.Effect<void, StoreError>
  readonly figures: Effect.Effect<EmailFigures, StoreError>
  /** The emails counted by status, for operators. */
  readonly statusFigures: Effect.Effect<EmailStatusFigures, StoreError>
  /**
   * Blanks and deletes old sent and failed emails (pending ones are kept whatever their age), then deletes the shared
   * contents that no email refers to any more and that no fan-out has used for `blankBodiesAfter`.
   */
  readonly prune: (retention: Retention) => Effect.Effect<PruneOutcome, StoreError>
  /** The run of this frequency and window end: the one recorded before, or a new one. */
  readonly startDigestRun: (window: DigestWindow) => Effect.Effect<DigestRun, StoreError>
  readonly completeDigestRun: (id: string) => Effect.Effect<void, StoreError>
  /** The runs of `frequency` not completed, and the latest run whether completed or not; oldest window first. */
  readonly digestRunsToResume: (frequency: DigestFrequency) => Effect.Effect<ReadonlyArray<DigestRun>, StoreError>
  /** The notifications recorded in the window (matched or not), oldest first. */
  readonly notificationsIn: (window: DigestWindow) => Effect.Effect<ReadonlyArray<Notification>, StoreError>
  /** The window's entries for active subscribers with an id in the range; in no particular order. */
  readonly digestEntries: (
    window: DigestWindow,
    range: { readonly afterSubscriberId: number; readonly throughSubscriberId: number }
  ) => Effect.Effect<ReadonlyArray<DigestEntry>, StoreError>
  /** Pending emails of a digest run; a subscriber who has one for the run already is skipped. Returns how many. */
  readonly insertDigestEmails: (runId: string, emails: ReadonlyArray<NewDigestEmail>) => Effect.Effect<number, StoreError>
  /** By subscriber id. */
  readonly emailsOfDigestRun: (runId: string) => Effect.Effect<ReadonlyArray<StoredEmail>, StoreError>
  readonly email: (id: string) => Effect.Effect<Option.Option<StoredEmail>, StoreError>
  /**
   * Keeps a provider's later report with its email, when an email has that id and (case aside) that address; the same
   * report (source, provider id and status) is kept once.
   */
  readonly recordDeliveryReport: (report: DeliveryReport) => Effect.Effect<DeliveryReportOutcome, StoreError>
  /** The reports kept with an email, in the order received. */
  readonly deliveryReportsOf: (emailId: string) => Effect.Effect<ReadonlyArray<StoredDeliveryReport>, StoreError>
  /** The emails of a notification's fan-out, by subscriber id. */
  readonly emailsOfNotification: (notificationId: string) => Effect.Effect<ReadonlyArray<StoredEmail>, StoreError>
}>() {}
