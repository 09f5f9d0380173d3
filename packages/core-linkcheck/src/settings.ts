import type { Resolver } from "@civicstack/outbound"
import { Duration } from "effect"

/** The retries of 429 and 503 answers in background checks. */
export interface RetryPolicy {
  /** How many times a 429 or 503 is asked again in a background check. */
  readonly attempts: number
  /** The longest wait, whatever `Retry-After` asks for. */
  readonly maxRetryAfter: Duration.DurationInput
  /** The first wait when the website gives no `Retry-After`; it doubles on each retry. */
  readonly baseDelay: Duration.DurationInput
}

/** How the link inspector makes the requests of a check. */
export interface InspectorConfig {
  readonly userAgent: string
  readonly connectTimeout: Duration.DurationInput
  /** Time allowed until the response headers arrive. */
  readonly responseTimeout: Duration.DurationInput
  /**
   * The most time a check may spend on the network, from its first request: waiting for a pooled connection, every
   * redirect hop and reading the body all count; the waits before retrying a busy site do not.
   */
  readonly checkTimeout: Duration.DurationInput
  /** A final response slower than this (and no errors) is reported as a slow page. */
  readonly slowThreshold: Duration.DurationInput
  /** A chain reaching this many redirect hops is a broken redirect. */
  readonly maxRedirects: number
  readonly allowPrivateAddresses: boolean
  /** Domain suffixes whose links are dangerous: reported as danger and never requested. */
  readonly suspiciousDomains: ReadonlyArray<string>
  /** Domain suffixes of internal websites: reported as a warning, still requested. */
  readonly internalDomains: ReadonlyArray<string>
  /** Connections per origin kept open and reused between checks. */
  readonly perHostConnections: number
  /** Retries of 429 and 503 in background checks. */
  readonly retries: RetryPolicy
  /** Resolves host names instead of the system resolver (tests and benches). */
  readonly lookup?: Resolver
}

/** How the check scheduler claims and runs checks. */
export interface SchedulerOptions {
  /** Checks in flight at once in this process. */
  readonly concurrency: number
  /**
   * Checks of one site (see `LinkcheckSettings.perHostConcurrency`) held at once by all workers sharing the store
   * (claimed and running, or claimed ahead), so at most this many in flight per site however many copies run.
   */
  readonly perHostConcurrency: number
  /**
   * Checks claimed ahead of free slots (default: half of `concurrency`), so that a finished check is followed at once
   * instead of after a round trip to the store: at most `perHostConcurrency` more of a host that no other process is
   * checking, and none beyond the limit of one that another process is.
   */
  readonly prefetch?: number
  /**
   * The pace of one host's checks: one start per this long. A start taken a little late (the event loop was busy) does
   * not push the next one back, so two starts can be that much closer.
   */
  readonly perHostInterval: Duration.DurationInput
  /** How often to look for work when nothing signalled it. */
  readonly pollInterval: Duration.DurationInput
  /** How long in-flight checks may run after shutdown begins before they are handed back. */
  readonly shutdownGracePeriod: Duration.DurationInput
  /** Starts of one check after which it is given up with a "could not complete" warning. */
  readonly maxAttempts: number
}

/** How an embedded link checking service behaves; every field has a default (`defaultLinkcheckSettings`). */
export interface LinkcheckSettings {
  /** Let checks and webhooks reach loopback and private addresses (tests, intranets). */
  readonly allowPrivateAddresses: boolean
  /** Domain suffixes whose links are reported as danger and never requested. */
  readonly suspiciousDomains: ReadonlyArray<string>
  /** Domain suffixes of internal websites, reported with a warning. */
  readonly internalDomains: ReadonlyArray<string>
  /** Checks at once in this process, queued and inside requests together. */
  readonly concurrency: number
  /**
   * Checks of one site at once (a registrable domain, e.g. `example.co.uk` for `www.example.co.uk:8080`; an IP address
   * or `localhost` without the port): queued checks in all processes sharing the database together, and checks inside
   * requests with those of their process. Also the connections kept per origin.
   */
  readonly perHostConcurrency: number
  /**
   * Look a link's `#fragment` up among its HTML page's `id`s and `<a name>`s, and warn when the section is missing;
   * a request can say otherwise (`check_fragments`).
   */
  readonly checkFragments: boolean
  /** Checks completed longer ago than this are deleted with their batches. */
  readonly retention: Duration.Duration
  /** How long running checks and webhook deliveries may take once shutdown begins before they are handed back. */
  readonly shutdownGracePeriod: Duration.Duration
  /** Webhooks delivered at once by this process. */
  readonly webhookConcurrency: number
  /** Resolves host names for checks and webhooks instead of the system resolver (tests and benches). */
  readonly resolver?: InspectorConfig["lookup"]
  /** Finer settings of the requests a check makes (timeouts, user agent) and the scheduler (poll interval, prefetch). */
  readonly inspector?: Partial<Omit<InspectorConfig, "allowPrivateAddresses" | "suspiciousDomains" | "internalDomains">>
  readonly scheduler?: Partial<Pick<SchedulerOptions, "pollInterval" | "prefetch" | "perHostInterval" | "maxAttempts">>
}

export const defaultLinkcheckSettings: LinkcheckSettings = {
  allowPrivateAddresses: false,
  suspiciousDomains: [],
  internalDomains: [],
  concurrency: 128,
  perHostConcurrency: 4,
  checkFragments: true,
  retention: Duration.weeks(4),
  shutdownGracePeriod: Duration.seconds(30),
  webhookConcurrency: 8
}
