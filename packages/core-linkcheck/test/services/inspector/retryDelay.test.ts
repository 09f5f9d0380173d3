import { describe, expect, it } from "@effect/vitest"
import { Duration } from "effect"
import { parseRetryAfter, retryDelay } from "../../../src/services/inspector/retryDelay"

const now = Date.parse("2025-01-01T12:00:00Z")
const policy = { attempts: 3, maxRetryAfter: "60 seconds", baseDelay: "1 second" } as const
const millis = (duration: Duration.Duration | null) => (duration === null ? null : Duration.toMillis(duration))

describe("parseRetryAfter", () => {
  it("reads seconds and HTTP dates", () => {
    expect(millis(parseRetryAfter("120", now))).toBe(120_000)
    expect(millis(parseRetryAfter(" 0 ", now))).toBe(0)
    expect(millis(parseRetryAfter("Wed, 01 Jan 2025 12:00:30 GMT", now))).toBe(30_000)
    expect(millis(parseRetryAfter("Wed, 01 Jan 2025 11:00:00 GMT", now))).toBe(0)
  })

  it("says nothing for missing or unusable values", () => {
    expect(parseRetryAfter(undefined, now)).toBeNull()
    expect(parseRetryAfter("soon", now)).toBeNull()
    expect(parseRetryAfter("1.5", now)).toBeNull()
    expect(parseRetryAfter("-5", now)).toBeNull()
  })
})

describe("retryDelay", () => {
  it("honours Retry-After up to the cap", () => {
    expect(millis(retryDelay(policy, 1, "5", now))).toBe(5_000)
    expect(millis(retryDelay(policy, 1, "3600", now))).toBe(60_000)
    expect(millis(retryDelay(policy, 2, "Wed, 01 Jan 2025 12:00:10 GMT", now))).toBe(10_000)
  })

  it("doubles from the base delay without Retry-After, up to the cap", () => {
    expect([1, 2, 3, 4].map((retry) => millis(retryDelay(policy, retry, undefined, now))))
      .toEqual([1_000, 2_000, 4_000, 8_000])
    expect(millis(retryDelay(policy, 10, undefined, now))).toBe(60_000)
  })
})
