import { Duration } from "effect"
import type { Redacted } from "effect"

/** Where a health check turns `warning`, and where it turns `critical` (a value at the threshold counts). */
export interface Thresholds<A> {
  readonly warning: A
  readonly critical: A
}

export interface HealthThresholds {
  /** Emails waiting to be sent plus fan-out and digest jobs not yet done. */
  readonly queueSize: Thresholds<number>
  /** How long the oldest email for an immediate subscriber has waited. */
  readonly queueAge: Thresholds<Duration.Duration>
}

/** The words of an email that asks its reader to confirm something through a link (Markdown). */
export interface ConfirmationWording {
  readonly subject: string
  /**
   * The paragraph before the link. In a subscription's confirmation, `{list}` stands for the list's title and
   * `{frequency}` for how often it sends ("once a day, when there are updates").
   */
  readonly lead: string
}

/** What the emails the service writes itself say; notifications and digests say what their senders wrote. */
export interface EmailWording {
  /** The link to manage one's subscriptions (`POST /subscribers/auth-token`). */
  readonly authToken: ConfirmationWording
  /** The link to confirm a subscription (`POST /subscriptions/auth-token`). */
  readonly subscriptionConfirmation: ConfirmationWording
}

/** How an embedded email alert service behaves; every field but the secret has a default (`defaultAlertsSettings`). */
export interface AlertsSettings {
  /** Base of the links in emails and of `subscription_url` (e.g. `https://www.example.org`); the host's setting. */
  readonly publicSiteUrl: string
  /**
   * HS256 secret of the auth-token JWTs. When left out, the service makes a random one for its own lifetime, so
   * tokens it sent stop working when it restarts: a host keeps one (`ALERTS_AUTH_TOKEN_SECRET`).
   */
  readonly authTokenSecret: Redacted.Redacted<string>
  /** The `iss` claim of the auth-token JWTs. */
  readonly authTokenIssuer: string
  /**
   * Auth-token emails one address may be sent within `window` (more are refused with 429 until the oldest leaves
   * it), and auth-token requests one caller of the API may make within a window of that length (more are refused
   * with 429 until it ends, before the address is looked up).
   */
  readonly authTokenLimit: {
    readonly perAddress: number
    readonly perCaller: number
    readonly window: Duration.Duration
  }
  readonly healthThresholds: HealthThresholds
  readonly wording: EmailWording
  /**
   * The bearer token GOV.UK Notify's delivery status callbacks carry (`POST /status-updates`); unset, the endpoint
   * answers 404.
   */
  readonly statusCallbackToken?: Redacted.Redacted<string> | undefined
  /** How emails are made and sent (`publicSiteUrl` above is theirs too); unset fields take their defaults. */
  readonly delivery: Partial<Omit<DeliverySettings, "publicSiteUrl">>
  /**
   * SQL only: the host's job queue is `@civicstack/jobs`' `layerSql` on the same database (as in the reference
   * server). A notification and its fan-out job are then written by one statement, one round trip instead of a
   * transaction's four. Left off, the service writes them in a transaction through the job queue, whatever it is.
   */
  readonly jobQueueInSameDatabase: boolean
}

export const defaultAlertsSettings: Omit<AlertsSettings, "authTokenSecret"> = {
  publicSiteUrl: "http://localhost:3000",
  authTokenIssuer: "civicstack-email-alerts",
  authTokenLimit: { perAddress: 5, perCaller: 1_000, window: Duration.hours(1) },
  wording: {
    authToken: {
      subject: "Confirm your email address",
      lead: "Someone asked to manage the email alerts sent to this address. If it was you, confirm your email address:"
    },
    subscriptionConfirmation: {
      subject: "Confirm that you want to get emails",
      lead: "Someone asked for emails about \"{list}\" to be sent to this address, {frequency}. If it was you, " +
        "confirm that you want them:"
    }
  },
  healthThresholds: {
    queueSize: { warning: 75_000, critical: 100_000 },
    queueAge: { warning: Duration.seconds(150), critical: Duration.seconds(300) }
  },
  delivery: {},
  jobQueueInSameDatabase: false
}

export interface Retention {
  /** Sent and failed emails older than this lose their body. */
  readonly blankBodiesAfter: Duration.Duration
  /** Sent and failed emails older than this are deleted. */
  readonly deleteAfter: Duration.Duration
}

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
  /** How long delivery stops when the provider refuses to send for the service at all (relay, authentication, policy). */
  readonly senderRefusalPause: Duration.Duration
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
  senderRefusalPause: Duration.minutes(1),
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
