import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Either, Redacted } from "effect"
import { alertsConfig } from "../../src/config"

const read = (env: Record<string, string>) =>
  Effect.either(Effect.withConfigProvider(alertsConfig, ConfigProvider.fromMap(new Map(Object.entries(env)), { pathDelim: "_" })))

describe("alertsConfig: the ALERTS_ section", () => {
  it.effect("unset values take the defaults, and no secret is made up", () =>
    Effect.gen(function*() {
      const config = Either.getOrThrow(yield* read({}))
      expect(config.authTokenSecret).toBeUndefined()
      expect(config.authTokenIssuer).toBe("civicstack-email-alerts")
      expect(config.healthThresholds.queueSize).toEqual({ warning: 75_000, critical: 100_000 })
      expect(Duration.toSeconds(config.healthThresholds.queueAge.warning)).toBe(150)
      expect(Duration.toSeconds(config.healthThresholds.queueAge.critical)).toBe(300)
      expect(config.delivery).toEqual({ fanOutChunkConcurrency: 1 })
      expect(config.authTokenLimit).toEqual({ perAddress: 5, perCaller: 1000, window: Duration.hours(1) })
      expect(config.statusCallbackToken).toBeUndefined()
      expect(config.wording.authToken.subject).toBe("Confirm your email address")
    }))

  it.effect("reads the confirmation emails' wording", () =>
    Effect.gen(function*() {
      const config = Either.getOrThrow(yield* read({
        ALERTS_AUTH_TOKEN_EMAIL_SUBJECT: "Manage your alerts",
        ALERTS_SUBSCRIPTION_EMAIL_LEAD: "Confirm {list}, sent {frequency}:"
      }))
      expect(config.wording).toEqual({
        authToken: { subject: "Manage your alerts", lead: expect.stringContaining("manage the email alerts") },
        subscriptionConfirmation: { subject: "Confirm that you want to get emails", lead: "Confirm {list}, sent {frequency}:" }
      })
    }))

  it.effect("reads Notify's callback token as Redacted", () =>
    Effect.gen(function*() {
      const config = Either.getOrThrow(yield* read({ NOTIFY_CALLBACK_BEARER_TOKEN: "callback-token-0123456789" }))
      expect(Redacted.value(config.statusCallbackToken!)).toBe("callback-token-0123456789")
      expect(String(config.statusCallbackToken)).not.toContain("callback-token")
    }))

  it.effect("reads the secret as Redacted, the issuer and the thresholds", () =>
    Effect.gen(function*() {
      const secret = "s".repeat(40)
      const config = Either.getOrThrow(yield* read({
        ALERTS_AUTH_TOKEN_SECRET: secret,
        ALERTS_AUTH_TOKEN_ISSUER: "alerts.example.org",
        ALERTS_QUEUE_SIZE_WARNING: "10",
        ALERTS_QUEUE_SIZE_CRITICAL: "20",
        ALERTS_QUEUE_AGE_WARNING_SECONDS: "30",
        ALERTS_QUEUE_AGE_CRITICAL_SECONDS: "60",
        ALERTS_FAN_OUT_CHUNK_CONCURRENCY: "3",
        ALERTS_AUTH_TOKENS_PER_ADDRESS: "2",
        ALERTS_AUTH_TOKENS_PER_CALLER: "40"
      }))
      expect(config.delivery).toEqual({ fanOutChunkConcurrency: 3 })
      expect(config.authTokenLimit).toEqual({ perAddress: 2, perCaller: 40, window: Duration.hours(1) })
      expect(Redacted.isRedacted(config.authTokenSecret)).toBe(true)
      expect(Redacted.value(config.authTokenSecret!)).toBe(secret)
      expect(String(config.authTokenSecret)).not.toContain(secret)
      expect(config.authTokenIssuer).toBe("alerts.example.org")
      expect(config.healthThresholds.queueSize).toEqual({ warning: 10, critical: 20 })
      expect(Duration.toSeconds(config.healthThresholds.queueAge.critical)).toBe(60)
    }))

  it.effect("each bad value names the variable and what it expects", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [Record<string, string>, string, string]> = [
        [{ ALERTS_AUTH_TOKEN_SECRET: "short" }, "AUTH_TOKEN_SECRET", "at least 32 characters"],
        [{ ALERTS_AUTH_TOKEN_ISSUER: " " }, "AUTH_TOKEN_ISSUER", "non-empty"],
        [{ ALERTS_QUEUE_SIZE_WARNING: "many" }, "QUEUE_SIZE_WARNING", "whole number"],
        [{ ALERTS_QUEUE_SIZE_CRITICAL: "0" }, "QUEUE_SIZE_CRITICAL", "whole number"],
        [{ ALERTS_QUEUE_AGE_WARNING_SECONDS: "1.5" }, "QUEUE_AGE_WARNING_SECONDS", "seconds"],
        [{ ALERTS_FAN_OUT_CHUNK_CONCURRENCY: "0" }, "FAN_OUT_CHUNK_CONCURRENCY", "from 1 to 64"],
        [{ ALERTS_AUTH_TOKENS_PER_CALLER: "0" }, "AUTH_TOKENS_PER_CALLER", "requests an hour"],
        [{ ALERTS_AUTH_TOKENS_PER_ADDRESS: "lots" }, "AUTH_TOKENS_PER_ADDRESS", "requests an hour"],
        [{ ALERTS_QUEUE_SIZE_WARNING: "30", ALERTS_QUEUE_SIZE_CRITICAL: "20" }, "QUEUE_SIZE", "must not be above"],
        [{ ALERTS_QUEUE_AGE_WARNING_SECONDS: "400" }, "QUEUE_AGE", "must not be above"],
        [{ ALERTS_SUBSCRIPTION_EMAIL_SUBJECT: "two\nlines" }, "SUBSCRIPTION_EMAIL_SUBJECT", "one line"],
        [{ NOTIFY_CALLBACK_BEARER_TOKEN: "short" }, "NOTIFY_CALLBACK_BEARER_TOKEN", "at least 16 characters"],
        [{ NOTIFY_CALLBACK_BEARER_TOKEN: "with a space in it, long" }, "NOTIFY_CALLBACK_BEARER_TOKEN", "without spaces"]
      ]
      for (const [env, name, expected] of cases) {
        const result = yield* read(env)
        expect(Either.isLeft(result), name).toBe(true)
        const message = String(Either.getLeft(result).pipe((left) => left._tag === "Some" ? left.value : ""))
        expect(message, name).toContain(name)
        expect(message, name).toContain(expected)
      }
    }))
})
