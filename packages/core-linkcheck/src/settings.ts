import { Duration } from "effect"
import type { InspectorConfig } from "./services/inspector/config"
import type { SchedulerOptions } from "./services/CheckScheduler"

/** How an embedded link checking service behaves; every field has a default (`defaultLinkcheckSettings`). */
export interface LinkcheckSettings {
  /** Let checks and webhooks reach loopback and private addresses (tests, intranets). */
  readonly allowPrivateAddresses: boolean
  /** Domain suffixes whose links are reported as danger and never requested. */
  readonly suspiciousDomains: ReadonlyArray<string>
  /** Domain suffixes of internal websites, reported with a warning. */
  readonly internalDomains: ReadonlyArray<string>
  /** Checks at once in this process. */
  readonly concurrency: number
  /** Checks of one host at once, in all processes sharing the database together. */
  readonly perHostConcurrency: number
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
  retention: Duration.weeks(4),
  shutdownGracePeriod: Duration.seconds(30),
  webhookConcurrency: 8
}
