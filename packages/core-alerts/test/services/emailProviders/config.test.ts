import { mkdtemp, readdir, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { ConfigError, ConfigProvider, Effect, Either, Redacted } from "effect"
import { EmailProvider } from "../../../src/services/EmailProvider"
import { emailProviderConfig, emailProviderLayer, EmailProviderSettings } from "../../../src/services/emailProviders/config"
import { apiKey, serviceId, startNotifyServer } from "../../fixtures/notifyServer"
import { startSmtpServer } from "../../fixtures/smtpServer"

const outboxDirectory = "/data/outbox"
const templateId = "f33517ff-2a88-4f6e-b855-c550268ce08a"

const read = (variables: Record<string, string>) =>
  Effect.runSync(Effect.either(Effect.withConfigProvider(
    emailProviderConfig({ outboxDirectory }),
    ConfigProvider.fromMap(new Map(Object.entries(variables)))
  )))

/** Each problem as `VARIABLE: message`. */
const problemsOf = (variables: Record<string, string>): ReadonlyArray<string> => {
  const result = read(variables)
  if (Either.isRight(result)) throw new Error(`expected a configuration error, got ${JSON.stringify(result.right)}`)
  return ConfigError.reduceWithContext(result.left, undefined, {
    andCase: (_, left: ReadonlyArray<string>, right: ReadonlyArray<string>) => [...left, ...right],
    orCase: (_, left: ReadonlyArray<string>, right: ReadonlyArray<string>) => [...left, ...right],
    invalidDataCase: (_, path, message) => [`${path.join("_")}: ${message}`],
    missingDataCase: (_, path, message) => [`${path.join("_")}: ${message}`],
    sourceUnavailableCase: (_, path, message) => [`${path.join("_")}: ${message}`],
    unsupportedCase: (_, path, message) => [`${path.join("_")}: ${message}`]
  })
}

const settingsOf = (variables: Record<string, string>) => Either.getOrThrow(read(variables))

describe("emailProviderConfig", () => {
  it("defaults to the log provider writing to the host's outbox, at 350 emails a second", () => {
    expect(settingsOf({})).toEqual({ provider: EmailProviderSettings.log({ outboxDirectory }), rateLimit: 350 })
    expect(settingsOf({ EMAIL_RATE_LIMIT: "20" }).rateLimit).toBe(20)
  })

  it("reads the smtp provider with its URL kept secret and a From address", () => {
    const { provider } = settingsOf({ EMAIL_PROVIDER: "smtp", SMTP_URL: "smtps://u:secret@mail.example.org:465" })
    expect(provider._tag).toBe("smtp")
    if (provider._tag !== "smtp") return
    expect(Redacted.value(provider.url)).toBe("smtps://u:secret@mail.example.org:465")
    expect(String(provider.url)).not.toContain("secret")
    expect(provider.from).toBe("alerts@localhost")
    const named = settingsOf({ EMAIL_PROVIDER: "smtp", SMTP_URL: "smtp://h", EMAIL_FROM: "GOV.UK <alerts@gov.example>" })
    expect(named.provider).toMatchObject({ from: "GOV.UK <alerts@gov.example>" })
  })

  it("reads where bounces go: the VERP return path of SMTP mail, and the listener when its port is set", () => {
    const read1 = Either.getOrThrow(read({
      EMAIL_PROVIDER: "smtp",
      SMTP_URL: "smtp://user:pass@mail.example.org:587",
      EMAIL_BOUNCE_ADDRESS: "bounces@alerts.example.org",
      EMAIL_BOUNCE_SMTP_PORT: "2525"
    }))
    expect(read1.bounces).toEqual({ address: "bounces@alerts.example.org", listener: { host: "0.0.0.0", port: 2525 } })
    expect(read1.provider).toMatchObject({ _tag: "smtp", bounceAddress: "bounces@alerts.example.org" })
    expect(Either.getOrThrow(read({ EMAIL_BOUNCE_ADDRESS: "bounces@alerts.example.org" })).bounces)
      .toEqual({ address: "bounces@alerts.example.org", listener: undefined })
    expect(Either.getOrThrow(read({})).bounces).toBeUndefined()
    expect(problemsOf({ EMAIL_BOUNCE_SMTP_PORT: "2525" }).map((problem) => problem.split(":")[0])).toEqual(["EMAIL_BOUNCE_ADDRESS"])
    expect(problemsOf({ EMAIL_BOUNCE_ADDRESS: "bounces+x@example.org", EMAIL_BOUNCE_SMTP_PORT: "0" }).map((problem) => problem.split(":")[0]).sort())
      .toEqual(["EMAIL_BOUNCE_ADDRESS", "EMAIL_BOUNCE_SMTP_PORT"])
  })

  it("reads the notify provider", () => {
    const { provider } = settingsOf({
      EMAIL_PROVIDER: "notify",
      NOTIFY_BASE_URL: "https://api.notifications.service.gov.uk",
      NOTIFY_API_KEY: apiKey,
      NOTIFY_TEMPLATE_ID: templateId
    })
    expect(provider).toMatchObject({
      _tag: "notify",
      baseUrl: "https://api.notifications.service.gov.uk",
      templateId,
      allowPrivateAddresses: false
    })
    expect(provider._tag === "notify" && Redacted.value(provider.apiKey)).toBe(apiKey)
    expect(settingsOf({
      EMAIL_PROVIDER: "notify",
      NOTIFY_BASE_URL: "http://127.0.0.1:9999",
      NOTIFY_API_KEY: apiKey,
      NOTIFY_TEMPLATE_ID: templateId,
      NOTIFY_ALLOW_PRIVATE_ADDRESSES: "true"
    }).provider).toMatchObject({ allowPrivateAddresses: true })
  })

  it("names each missing variable that the chosen provider needs", () => {
    expect(problemsOf({ EMAIL_PROVIDER: "smtp" })).toEqual([
      "SMTP_URL: SMTP_URL is required when EMAIL_PROVIDER is smtp: a URL such as smtp://user:pass@host:587"
    ])
    const notify = problemsOf({ EMAIL_PROVIDER: "notify", NOTIFY_TEMPLATE_ID: templateId })
    expect(notify.map((problem) => problem.split(":")[0])).toEqual(["NOTIFY_BASE_URL", "NOTIFY_API_KEY"])
    expect(notify[1]).toContain("required when EMAIL_PROVIDER is notify")
  })

  it("names each bad value and what it expects", () => {
    expect(problemsOf({ EMAIL_PROVIDER: "sendgrid" })).toEqual(["EMAIL_PROVIDER: log, smtp or notify"])
    expect(problemsOf({ EMAIL_RATE_LIMIT: "0" })).toEqual(["EMAIL_RATE_LIMIT: a whole number of emails per second, at least 1"])
    expect(problemsOf({ EMAIL_RATE_LIMIT: "fast" })).toHaveLength(1)
    expect(problemsOf({ EMAIL_FROM: "two@example.org, three@example.org" })).toEqual([
      "EMAIL_FROM: one address, as alerts@example.org or Name <alerts@example.org>"
    ])
    expect(problemsOf({ EMAIL_FROM: "not an address" })).toHaveLength(1)
    expect(problemsOf({ NOTIFY_BASE_URL: "ftp://x" })[0]).toMatch(/^NOTIFY_BASE_URL: an absolute http\(s\) URL/)
    expect(problemsOf({ NOTIFY_TEMPLATE_ID: "welcome" })).toEqual(["NOTIFY_TEMPLATE_ID: a template id (a UUID)"])
    expect(problemsOf({ NOTIFY_ALLOW_PRIVATE_ADDRESSES: "yes" })).toEqual(["NOTIFY_ALLOW_PRIVATE_ADDRESSES: true or false"])
  })

  it("says what is wrong with a secret without showing it", () => {
    const [smtp] = problemsOf({ EMAIL_PROVIDER: "smtp", SMTP_URL: "https://user:hunter2@mail.example.org" })
    expect(smtp).toBe("SMTP_URL: an SMTP URL: expected the smtp: or smtps: scheme, not https:")
    const [notify] = problemsOf({ NOTIFY_API_KEY: `key-${serviceId}-hunter2-not-a-uuid-at-all-0123456789` })
    expect(notify).toMatch(/^NOTIFY_API_KEY: a Notify API key: expected \{key_name\}-\{service_id\}-\{secret_key\}/)
    expect(notify).not.toContain("hunter2")
  })

  it("reports every bad variable at once", () => {
    expect(problemsOf({ EMAIL_PROVIDER: "notify", EMAIL_RATE_LIMIT: "-1", NOTIFY_TEMPLATE_ID: "x" }).map((p) => p.split(":")[0]).sort())
      .toEqual(["EMAIL_RATE_LIMIT", "NOTIFY_TEMPLATE_ID"])
  })
})

describe("emailProviderLayer", () => {
  it.scoped("builds the provider the settings name, and it sends", () =>
    Effect.gen(function*() {
      const parent = yield* Effect.acquireRelease(
        Effect.promise(() => mkdtemp(join(tmpdir(), "alerts-layer-"))),
        (directory) => Effect.promise(() => rm(directory, { recursive: true, force: true }))
      )
      const outbox = join(parent, "outbox")
      const smtpServer = yield* startSmtpServer()
      const notifyServer = yield* startNotifyServer()
      const email = { id: "e-1", address: "reader@example.org", subject: "Hello", body: "Hi" }
      const sendWith = (settings: EmailProviderSettings) =>
        Effect.flatMap(EmailProvider, (provider) => Effect.as(provider.send(email), provider.name)).pipe(
          Effect.provide(emailProviderLayer(settings))
        )
      expect(yield* sendWith(EmailProviderSettings.log({ outboxDirectory: outbox }))).toBe("log")
      expect(yield* sendWith(EmailProviderSettings.smtp({ url: Redacted.make(smtpServer.url), from: "a@example.org" })))
        .toBe("smtp")
      expect(yield* sendWith(EmailProviderSettings.notify({
        baseUrl: notifyServer.baseUrl,
        apiKey: Redacted.make(apiKey),
        templateId,
        allowPrivateAddresses: true
      }))).toBe("notify")
      expect(yield* Effect.promise(() => readdir(outbox))).toHaveLength(1)
      expect(smtpServer.received).toHaveLength(1)
      expect(notifyServer.calls).toHaveLength(1)
    }))
})
