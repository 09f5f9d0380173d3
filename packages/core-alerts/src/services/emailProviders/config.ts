import { expecting, Flag } from "@civicstack/kit"
import { Config, ConfigError, Data, Either, Option, Redacted, Schema } from "effect"
import type { Layer } from "effect"
import addressparser from "nodemailer/lib/addressparser"
import type { EmailProvider } from "../EmailProvider"
import { logProviderLayer } from "./log"
import type { LogProviderSettings } from "./log"
import { isUuid } from "../../domain/ids"
import { notifyProviderLayer, parseNotifyApiKey } from "./notify"
import type { NotifyProviderSettings } from "./notify"
import { parseSmtpUrl, smtpProviderLayer } from "./smtp"
import type { SmtpProviderSettings } from "./smtp"

export { type LogProviderSettings, logProviderLayer, makeLogProvider, type OutboxMessage } from "./log"
export {
  makeNotifyProvider,
  type NotifyApiKey,
  notifyBearerToken,
  type NotifyProviderSettings,
  notifyProviderLayer,
  parseNotifyApiKey
} from "./notify"
export { classifySmtpFailure, makeSmtpProvider, parseSmtpUrl, type SmtpProviderSettings, smtpProviderLayer } from "./smtp"

/** Which provider sends the emails, with its settings. */
export type EmailProviderSettings = Data.TaggedEnum<{
  log: LogProviderSettings
  smtp: SmtpProviderSettings
  notify: NotifyProviderSettings
}>
export const EmailProviderSettings = Data.taggedEnum<EmailProviderSettings>()

/** The chosen provider as a layer; the smtp pool and the notify connections close with its scope. */
export const emailProviderLayer = (settings: EmailProviderSettings): Layer.Layer<EmailProvider> =>
  EmailProviderSettings.$match(settings, {
    log: logProviderLayer,
    smtp: smtpProviderLayer,
    notify: notifyProviderLayer
  })

/** Where bounces of SMTP mail come back to, and the SMTP listener that takes them (`bounceListenerLayer`). */
export interface BounceSettings {
  /** `bounces@example.org`: each message's envelope sender is `bounces+<email id>@example.org`. */
  readonly address: string
  /** Where the listener takes bounces; unset, none is started (they are taken elsewhere, or not at all). */
  readonly listener?: { readonly host: string; readonly port: number } | undefined
}

export interface EmailSettings {
  readonly provider: EmailProviderSettings
  /** Emails per second the delivery worker may hand to the provider. */
  readonly rateLimit: number
  readonly bounces?: BounceSettings | undefined
}

export const DEFAULT_EMAIL_FROM = "alerts@localhost"
export const DEFAULT_EMAIL_RATE_LIMIT = 350

const ProviderName = Schema.Literal("log", "smtp", "notify").annotations(expecting("log, smtp or notify"))

const RateLimit = Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 1_000_000))
  .annotations(expecting("a whole number of emails per second, at least 1"))

const isSingleMailbox = (value: string): boolean => {
  if (/[\r\n]/.test(value)) return false
  const parsed = addressparser(value)
  return parsed.length === 1 && /^[^\s@]+@[^\s@]+$/.test(parsed[0]?.address ?? "")
}

/** A plain address without a `+` in its local part: the email's id goes after one. */
const BounceAddress = Schema.String.pipe(Schema.filter((value) => /^[^\s@+<>"]+@[^\s@<>"]+\.[^\s@<>"]+$/.test(value)))
  .annotations(expecting("a plain address such as bounces@example.org, without + in it"))

const Port = Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 65535))
  .annotations(expecting("a whole number from 1 to 65535"))

const FromAddress = Schema.String.pipe(Schema.filter(isSingleMailbox))
  .annotations(expecting("one address, as alerts@example.org or Name <alerts@example.org>"))

/** A string schema whose check returns the problem (or undefined), shown after what the variable expects. */
const checked = (expected: string, problemOf: (value: string) => string | undefined) =>
  Schema.String.pipe(
    Schema.filter((value) => problemOf(value) === undefined),
    Schema.annotations({
      message: (issue) => {
        const actual = issue._tag === "Refinement" ? issue.actual : undefined
        const problem = typeof actual === "string" ? problemOf(actual) : undefined
        return { message: problem === undefined ? expected : `${expected}: ${problem}`, override: true }
      }
    })
  )

const SmtpUrl = checked(
  "an SMTP URL",
  (value) => Either.getLeft(parseSmtpUrl(value)).pipe(Option.getOrUndefined)
)

const NotifyApiKey = checked(
  "a Notify API key",
  (value) => Either.getLeft(parseNotifyApiKey(value)).pipe(Option.getOrUndefined)
)

const HttpUrl = Schema.String.pipe(
  Schema.filter((value) => URL.canParse(value) && ["http:", "https:"].includes(new URL(value).protocol)),
  Schema.annotations(expecting("an absolute http(s) URL such as https://api.notifications.service.gov.uk"))
)

const TemplateId = Schema.String.pipe(Schema.filter(isUuid), Schema.annotations(expecting("a template id (a UUID)")))

const optional = <A, I extends string>(name: string, schema: Schema.Schema<A, I>) =>
  Config.option(Schema.Config(name, schema))

const requiredFor = <A>(
  provider: string,
  name: string,
  expected: string,
  value: Option.Option<A>
): Either.Either<A, ConfigError.ConfigError> =>
  Option.match(value, {
    onNone: () =>
      Either.left(ConfigError.MissingData([name], `${name} is required when EMAIL_PROVIDER is ${provider}: ${expected}`)),
    onSome: (present) => Either.right(present)
  })

/** Every problem at once (not only the first), or undefined when there is none. */
const allProblems = (
  results: ReadonlyArray<Either.Either<unknown, ConfigError.ConfigError>>
): ConfigError.ConfigError | undefined => {
  const [first, ...others] = results.flatMap((result) => (Either.isLeft(result) ? [result.left] : []))
  return first === undefined ? undefined : others.reduce((all, problem) => ConfigError.And(all, problem), first)
}

/**
 * The email section of a host's configuration: EMAIL_PROVIDER (log, smtp or notify; log by default), EMAIL_FROM,
 * SMTP_URL (smtp), NOTIFY_BASE_URL, NOTIFY_API_KEY and NOTIFY_TEMPLATE_ID (notify), NOTIFY_ALLOW_PRIVATE_ADDRESSES
 * and EMAIL_RATE_LIMIT; EMAIL_BOUNCE_ADDRESS (the VERP return path of SMTP mail), EMAIL_BOUNCE_SMTP_PORT and
 * EMAIL_BOUNCE_SMTP_HOST (0.0.0.0 by default: the bounce listener). A value that is set is checked even when its
 * provider is not chosen; each bad or missing
 * value names its variable and what it expects. The host passes the outbox of the log provider (in its DATA_DIR).
 */
export const emailProviderConfig = (options: { readonly outboxDirectory: string }): Config.Config<EmailSettings> =>
  Config.all({
    provider: Schema.Config("EMAIL_PROVIDER", ProviderName).pipe(Config.withDefault("log" as const)),
    rateLimit: Schema.Config("EMAIL_RATE_LIMIT", RateLimit).pipe(Config.withDefault(DEFAULT_EMAIL_RATE_LIMIT)),
    from: Schema.Config("EMAIL_FROM", FromAddress).pipe(Config.withDefault(DEFAULT_EMAIL_FROM)),
    smtpUrl: optional("SMTP_URL", SmtpUrl),
    notifyBaseUrl: optional("NOTIFY_BASE_URL", HttpUrl),
    notifyApiKey: optional("NOTIFY_API_KEY", NotifyApiKey),
    notifyTemplateId: optional("NOTIFY_TEMPLATE_ID", TemplateId),
    notifyAllowPrivateAddresses: Schema.Config("NOTIFY_ALLOW_PRIVATE_ADDRESSES", Flag).pipe(Config.withDefault(false)),
    bounceAddress: optional("EMAIL_BOUNCE_ADDRESS", BounceAddress),
    bouncePort: optional("EMAIL_BOUNCE_SMTP_PORT", Port),
    bounceHost: Schema.Config("EMAIL_BOUNCE_SMTP_HOST", Schema.String).pipe(Config.withDefault("0.0.0.0"))
  }).pipe(
    Config.mapOrFail((read) =>
      Option.isSome(read.bouncePort) && Option.isNone(read.bounceAddress)
        ? Either.left(ConfigError.MissingData(
          ["EMAIL_BOUNCE_ADDRESS"],
          "EMAIL_BOUNCE_ADDRESS is required when EMAIL_BOUNCE_SMTP_PORT is set: the address bounces come back to"
        ))
        : Either.right(read)
    ),
    Config.mapOrFail((read): Either.Either<EmailSettings, ConfigError.ConfigError> => {
      const bounces = Option.map(read.bounceAddress, (address): BounceSettings => ({
        address,
        listener: Option.getOrUndefined(Option.map(read.bouncePort, (port) => ({ host: read.bounceHost, port })))
      }))
      const withRateLimit = (provider: EmailProviderSettings): EmailSettings => ({
        provider,
        rateLimit: read.rateLimit,
        ...Option.match(bounces, { onNone: () => ({}), onSome: (bounces) => ({ bounces }) })
      })
      switch (read.provider) {
        case "log":
          return Either.right(withRateLimit(EmailProviderSettings.log({ outboxDirectory: options.outboxDirectory })))
        case "smtp":
          return requiredFor("smtp", "SMTP_URL", "a URL such as smtp://user:pass@host:587", read.smtpUrl).pipe(
            Either.map((url) =>
              withRateLimit(EmailProviderSettings.smtp({
                url: Redacted.make(url),
                from: read.from,
                bounceAddress: Option.getOrUndefined(read.bounceAddress)
              }))
            )
          )
        case "notify": {
          const baseUrl = requiredFor("notify", "NOTIFY_BASE_URL", "the API's base URL", read.notifyBaseUrl)
          const apiKey = requiredFor("notify", "NOTIFY_API_KEY", "the service's API key", read.notifyApiKey)
          const templateId = requiredFor(
            "notify",
            "NOTIFY_TEMPLATE_ID",
            "the id of a template whose subject is ((subject)) and body ((body))",
            read.notifyTemplateId
          )
          const problems = allProblems([baseUrl, apiKey, templateId])
          if (problems !== undefined) return Either.left(problems)
          return Either.all({ baseUrl, apiKey, templateId }).pipe(
            Either.map((notify) =>
              withRateLimit(EmailProviderSettings.notify({
                ...notify,
                apiKey: Redacted.make(notify.apiKey),
                allowPrivateAddresses: read.notifyAllowPrivateAddresses
              }))
            )
          )
        }
      }
    })
  )
