import { Duration } from "effect"
import type { Retention } from "./EmailStore"

/** How the email side of the service works; every field has a default (`defaultDeliverySettings`). */
export interface DeliverySettings {
  /** Base of the links in emails (no trailing slash needed): content pages and unsubscribe pages. */
  readonly publicSiteUrl: string
  /** Markdown at the end of every alert email. */
  readonly footer: string
  /** Fan-out inserts the emails of this many subscriber ids per statement. */
  readonly fanOutChunkSize: number
  /**
   * Chunks of one notification written at the same time (each on a connection of its own on PostgreSQL). One by
   * default: more chunks at once take connections and CPU from requests for little gain on a database's few CPUs.
   */
  readonly fanOutChunkConcurrency: number
  /** Notifications fanned out at the same time by one copy. */
  readonly fanOutConcurrency: number
  /** Emails claimed per statement. */
  readonly batchSize: number
  /** Emails handed to the provider at the same time. */
  readonly concurrency: number
  /**
   * Sends started per turn of the event loop at most; more wait for the next turn, so that requests served by the
   * same process are read between them rather than after every send whose lane was ready.
   */
  readonly sendsPerTurn: number
  /**
   * Emails the provider took are marked sent together, in one statement, once this many are waiting to be marked...
   */
  readonly sentFlushSize: number
  /** ...or once the oldest of them has waited this long (an email sent but not yet marked is sent again after a crash). */
  readonly sentFlushInterval: Duration.Duration
  /** Emails per second to the provider, over all of this copy's sends. */
  readonly rateLimitPerSecond: number
  /** How long a claimed email is left to its worker before another may claim it. */
  readonly lease: Duration.Duration
  /** How often to look for due emails when there were none. */
  readonly pollInterval: Duration.Duration
  /** Attempts after which a temporarily failing email is failed for good. */
  readonly maxAttempts: number
  /** Wait before attempt n + 1: min(max, base * 2^(n - 1)), or the provider's Retry-After when longer. */
  readonly backoff: { readonly base: Duration.Duration; readonly max: Duration.Duration }
  readonly retention: Retention
  /** When old emails are pruned (cron, in `scheduleTimeZone`). */
  readonly retentionCron: string
  readonly scheduleTimeZone: string
  /** How long queued jobs (fan-out) may run on when the workers stop. */
  readonly shutdownGracePeriod: Duration.Duration
}

export const defaultDeliverySettings: DeliverySettings = {
  publicSiteUrl: "http://localhost:3000",
  footer: "You can change or cancel your subscriptions at any time.",
  fanOutChunkSize: 10_000,
  fanOutChunkConcurrency: 1,
  fanOutConcurrency: 2,
  batchSize: 200,
  concurrency: 32,
  sendsPerTurn: 8,
  sentFlushSize: 64,
  sentFlushInterval: Duration.millis(50),
  rateLimitPerSecond: 350,
  lease: Duration.minutes(2),
  pollInterval: Duration.seconds(1),
  maxAttempts: 10,
  backoff: { base: Duration.seconds(10), max: Duration.hours(1) },
  retention: { blankBodiesAfter: Duration.days(7), deleteAfter: Duration.days(28) },
  retentionCron: "30 3 * * *",
  scheduleTimeZone: "Europe/London",
  shutdownGracePeriod: Duration.seconds(30)
}

/** The defaults with `overrides` on top. */
export const deliverySettings = (overrides: Partial<DeliverySettings> = {}): DeliverySettings => ({
  ...defaultDeliverySettings,
  ...overrides
})

/** `publicSiteUrl` with `path` (which starts with a slash) after it. */
export const siteLink = (settings: Pick<DeliverySettings, "publicSiteUrl">, path: string) =>
  `${settings.publicSiteUrl.replace(/\/+$/, "")}${path}`

export const unsubscribeUrlPrefix = (settings: Pick<DeliverySettings, "publicSiteUrl">) =>
  siteLink(settings, "/email/unsubscribe/")
