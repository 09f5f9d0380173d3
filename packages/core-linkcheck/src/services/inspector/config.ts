import type { Duration } from "effect"
import type { DomainLists } from "../../domain/urlRules"
import type { Resolver } from "@civicstack/outbound"
import type { RetryPolicy } from "./retryDelay"

export interface InspectorConfig extends DomainLists {
  readonly userAgent: string
  readonly connectTimeout: Duration.DurationInput
  /** Time allowed until the response headers arrive. */
  readonly responseTimeout: Duration.DurationInput
  /** A final response slower than this (and no errors) is reported as a slow page. */
  readonly slowThreshold: Duration.DurationInput
  /** A chain reaching this many redirect hops is a broken redirect. */
  readonly maxRedirects: number
  readonly allowPrivateAddresses: boolean
  /** Connections per origin kept open and reused between checks. */
  readonly perHostConnections: number
  /** Retries of 429 and 503 in background checks. */
  readonly retries: RetryPolicy
  /** Resolves host names instead of the system resolver (tests and benches). */
  readonly lookup?: Resolver
}

export const defaultInspectorConfig: InspectorConfig = {
  userAgent: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) " +
    "Chrome/131.0.0.0 Safari/537.36 civicstack-linkcheck/0.1 (+https://github.com/civicstack)",
  connectTimeout: "15 seconds",
  responseTimeout: "15 seconds",
  slowThreshold: "5 seconds",
  maxRedirects: 8,
  allowPrivateAddresses: false,
  suspiciousDomains: [],
  internalDomains: [],
  perHostConnections: 4,
  retries: { attempts: 3, maxRetryAfter: "60 seconds", baseDelay: "1 second" }
}
