import { Duration, Either, Option, Redacted } from "effect"
import { describe, expect, it } from "vitest"
import { parseServerConfig } from "../src/config"

describe("server configuration", () => {
  it("uses the documented defaults: embedded database in ./data on port 3000", () => {
    const config = Either.getOrThrow(parseServerConfig({}))
    expect(config.port).toBe(3000)
    expect(config.host).toBe("0.0.0.0")
    expect(config.database).toEqual({ _tag: "Pglite", dataDir: "./data" })
    expect(config.services).toEqual(["sso", "alerts", "linkcheck"])
    expect(config.logLevel).toBe("info")
    expect(config.tls).toBeUndefined()
    expect(config.run).toEqual(["web", "workers"])
    expect(config.linkcheck).toMatchObject({ concurrency: 128, perHostConcurrency: 4, allowPrivateAddresses: false })
    expect(config.linkcheck.scheduler).toEqual({})
    expect(config.tracing).toBeUndefined()
  })

  it("reads where spans go from OpenTelemetry's variables, and never shows the exporter's headers", () => {
    const traced = (env: Record<string, string>) => Either.getOrThrow(parseServerConfig(env)).tracing
    expect(traced({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" })).toEqual({
      url: "http://collector:4318/v1/traces",
      headers: {},
      protocol: "http/protobuf",
      serviceName: "civicstack"
    })
    expect(traced({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://traces.example/otlp/spans",
      OTEL_EXPORTER_OTLP_HEADERS: "Authorization=Bearer%20abc,x-tenant = news ",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_SERVICE_NAME: "civicstack-eu"
    })).toEqual({
      url: "https://traces.example/otlp/spans",
      headers: { authorization: "Bearer abc", "x-tenant": "news" },
      protocol: "http/json",
      serviceName: "civicstack-eu"
    })

    const refused = parseServerConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318",
      OTEL_EXPORTER_OTLP_HEADERS: "authorization",
      OTEL_EXPORTER_OTLP_PROTOCOL: "grpc"
    })
    expect(Either.isLeft(refused) && refused.left.problems).toEqual([
      "OTEL_EXPORTER_OTLP_ENDPOINT must be an absolute http(s) URL (got \"collector:4318\")",
      "OTEL_EXPORTER_OTLP_HEADERS must be comma-separated name=value pairs",
      "OTEL_EXPORTER_OTLP_PROTOCOL must be one of http/protobuf, http/json (got \"grpc\")"
    ])
  })

  it("reads each service's own section and what this copy runs", () => {
    const config = Either.getOrThrow(parseServerConfig({
      RUN: "workers",
      LINKCHECK_CONCURRENCY: "32",
      LINKCHECK_PER_HOST_CONCURRENCY: "2",
      LINKCHECK_PER_HOST_INTERVAL_MS: "0",
      LINKCHECK_CHECK_TIMEOUT_SECONDS: "12",
      LINKCHECK_ALLOW_PRIVATE_ADDRESSES: "true",
      LINKCHECK_SUSPICIOUS_DOMAINS: "bad.example, .worse.example",
      LINKCHECK_FRAGMENTS: "false"
    }))
    expect(config.run).toEqual(["workers"])
    expect(config.linkcheck).toMatchObject({
      checkFragments: false,
      concurrency: 32,
      perHostConcurrency: 2,
      allowPrivateAddresses: true,
      suspiciousDomains: ["bad.example", "worse.example"],
      scheduler: { perHostInterval: Duration.millis(0) },
      inspector: { checkTimeout: Duration.seconds(12) }
    })
  })

  it("selects PostgreSQL when DATABASE_URL is set and treats blank variables as unset", () => {
    const config = Either.getOrThrow(
      parseServerConfig({ DATABASE_URL: "postgres://app:secret@db:5432/civicstack", PORT: " ", SERVICES: "linkcheck, sso" })
    )
    expect(config.database._tag).toBe("Postgres")
    if (config.database._tag === "Postgres") {
      expect(Redacted.value(config.database.url)).toBe("postgres://app:secret@db:5432/civicstack")
      expect(String(config.database.url)).not.toContain("secret")
      expect(config.database.poolSize).toBe(10)
    }
    expect(config.port).toBe(3000)
    expect(config.services).toEqual(["linkcheck", "sso"])
  })

  it("takes the PostgreSQL pool size from DATABASE_POOL_SIZE and refuses one that is not a whole number from 1", () => {
    const config = Either.getOrThrow(parseServerConfig({ DATABASE_URL: "postgres://db/civicstack", DATABASE_POOL_SIZE: "24" }))
    expect(config.database).toMatchObject({ _tag: "Postgres", poolSize: 24 })
    const result = parseServerConfig({ DATABASE_URL: "postgres://db/civicstack", DATABASE_POOL_SIZE: "0" })
    expect(Either.isLeft(result) ? result.left.problems : []).toEqual([
      "DATABASE_POOL_SIZE must be a whole number from 1 to 1000 (got \"0\")"
    ])
  })

  it("in production requires the single sign-on's https issuer and encryption key, and never shows the key", () => {
    const missing = parseServerConfig({ NODE_ENV: "production", ALERTS_AUTH_TOKEN_SECRET: "x".repeat(32) })
    expect(Either.isLeft(missing) ? missing.left.problems : []).toEqual([
      "SSO_ISSUER must be the single sign-on's https:// URL when NODE_ENV=production (the issuer of its tokens)",
      "SSO_ENCRYPTION_KEY must be set when NODE_ENV=production (the key its signing keys, push tokens and two-step secrets are sealed under)"
    ])
    const key = Buffer.alloc(32, 7).toString("base64")
    const config = Either.getOrThrow(parseServerConfig({
      NODE_ENV: "production",
      ALERTS_AUTH_TOKEN_SECRET: "x".repeat(32),
      SSO_ISSUER: "https://signon.example/",
      SSO_ENCRYPTION_KEY: `${key}, ${Buffer.alloc(32, 9).toString("base64")}`
    }))
    expect(config.sso.issuer).toEqual(Option.some("https://signon.example"))
    expect(Option.getOrThrow(config.sso.encryptionKeys)).toHaveLength(2)
    const bad = parseServerConfig({
      SSO_ENCRYPTION_KEY: "c2hvcnQ=",
      SSO_ISSUER: "ftp://signon.example",
      SSO_SESSION_MAX_HOURS: "0",
      SSO_REFRESH_TOKEN_DAYS: "forever"
    })
    expect(Either.isLeft(bad) ? bad.left.problems : []).toEqual([
      "SSO_ISSUER must be an absolute http(s) URL (got \"ftp://signon.example\")",
      "SSO_ENCRYPTION_KEY must be one or more comma-separated base64 keys of 32 bytes (openssl rand -base64 32)",
      "SSO_SESSION_MAX_HOURS must be a whole number of hours from 1 to 744 (got \"0\")",
      "SSO_REFRESH_TOKEN_DAYS must be a whole number of days from 1 to 3650 (got \"forever\")"
    ])
  })

  it("reports every bad value at once, one line each, naming the variable and the value (never a secret's)", () => {
    const result = parseServerConfig({
      PORT: "70000",
      DATABASE_URL: "mysql://app:hunter2@db/civicstack",
      SERVICES: "sso,billing",
      LOG_LEVEL: "loud",
      METRICS: "sometimes",
      TRUST_PROXY: "true",
      TLS_CERT_FILE: "/etc/cert.pem",
      RUN: "web,cron",
      LINKCHECK_CONCURRENCY: "0",
      LINKCHECK_PER_HOST_INTERVAL_MS: "-5",
      LINKCHECK_ALLOW_PRIVATE_ADDRESSES: "maybe",
      LINKCHECK_RETENTION_DAYS: "forever",
      LINKCHECK_CHECK_TIMEOUT_SECONDS: "0",
      LINKCHECK_FRAGMENTS: "sometimes"
    })
    expect(Either.isLeft(result)).toBe(true)
    const problems = Either.isLeft(result) ? result.left.problems : []
    expect(problems).toEqual([
      "PORT must be a whole number from 0 to 65535 (got \"70000\")",
      "DATABASE_URL must be a postgres:// or postgresql:// URL",
      "SERVICES must be a comma-separated list of sso, alerts, linkcheck (got \"sso,billing\")",
      "RUN must be a comma-separated list of web, workers (got \"web,cron\")",
      "TRUST_PROXY must be false, a number of proxies, or a comma-separated list of their addresses and CIDR ranges (got \"true\")",
      "METRICS must be true or false (got \"sometimes\")",
      "LOG_LEVEL must be one of trace, debug, info, warning, error, fatal, none (got \"loud\")",
      "TLS_CERT_FILE and TLS_KEY_FILE must be set together",
      "LINKCHECK_ALLOW_PRIVATE_ADDRESSES must be true or false (got \"maybe\")",
      "LINKCHECK_CONCURRENCY must be a whole number from 1 to 10000 (got \"0\")",
      "LINKCHECK_FRAGMENTS must be true or false (got \"sometimes\")",
      "LINKCHECK_PER_HOST_INTERVAL_MS must be a whole number of milliseconds from 0 to 60000 (got \"-5\")",
      "LINKCHECK_CHECK_TIMEOUT_SECONDS must be a whole number of seconds from 1 to 600 (got \"0\")",
      "LINKCHECK_RETENTION_DAYS must be a whole number of days from 1 to 3650 (got \"forever\")"
    ])
  })
})
