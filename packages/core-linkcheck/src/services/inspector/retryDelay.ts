import { Duration } from "effect"
import type { RetryPolicy } from "../../settings"

/** The wait asked for by a `Retry-After` value (seconds or an HTTP date), or null when it says nothing usable. */
export const parseRetryAfter = (value: string | undefined, nowMillis: number): Duration.Duration | null => {
  if (value === undefined) return null
  const trimmed = value.trim()
  if (/^\d+$/.test(trimmed)) return Duration.seconds(Number(trimmed))
  // An HTTP date always names its day or month; this keeps bare numbers like "1.5" from parsing as dates.
  const date = /[a-z]{3}/i.test(trimmed) ? Date.parse(trimmed) : Number.NaN
  if (Number.isNaN(date)) return null
  return Duration.millis(Math.max(0, date - nowMillis))
}

/** How long to wait before retry number `retry` (1 for the first retry). */
export const retryDelay = (
  policy: RetryPolicy,
  retry: number,
  retryAfter: string | undefined,
  nowMillis: number
): Duration.Duration => {
  const asked = parseRetryAfter(retryAfter, nowMillis) ??
    Duration.times(Duration.decode(policy.baseDelay), 2 ** Math.max(0, retry - 1))
  return Duration.min(asked, Duration.decode(policy.maxRetryAfter))
}
