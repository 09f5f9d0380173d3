import { expecting, WholeNumber } from "@civicstack/kit"
import { Config, ConfigError, Duration, Either, Option, Schema } from "effect"
import type { Redacted } from "effect"
import type { AlertsSettings, ConfirmationWording, DeliverySettings, Thresholds } from "./settings"
import { defaultAlertsSettings, defaultDeliverySettings } from "./settings"

const MIN_SECRET_LENGTH = 32

const Secret = Schema.Redacted(
  Schema.String.pipe(Schema.filter((secret) => secret.trim().length >= MIN_SECRET_LENGTH))
).annotations(expecting(`a secret of at least ${MIN_SECRET_LENGTH} characters`))

const MIN_CALLBACK_TOKEN_LENGTH = 16

const CallbackToken = Schema.Redacted(
  Schema.String.pipe(Schema.filter((token) => /^\S+$/.test(token) && token.length >= MIN_CALLBACK_TOKEN_LENGTH))
).annotations(expecting(`a token of at least ${MIN_CALLBACK_TOKEN_LENGTH} characters without spaces`))

const Issuer = Schema.String.pipe(Schema.filter((issuer) => issuer.trim() !== ""))
  .annotations(expecting("a non-empty name for the iss claim of auth tokens"))

const Subject = Schema.String.pipe(Schema.filter((text) => text.trim() !== "" && text.length <= 200 && !/[\r\n]/.test(text)))
  .annotations(expecting("one line of at most 200 characters"))

const Lead = Schema.String.pipe(Schema.filter((text) => text.trim() !== "" && text.length <= 2000))
  .annotations(expecting("text of at most 2000 characters"))

const wordingOf = (prefix: string, defaults: ConfirmationWording) =>
  Config.all({
    subject: Schema.Config(`${prefix}_EMAIL_SUBJECT`, Subject).pipe(Config.withDefault(defaults.subject)),
    lead: Schema.Config(`${prefix}_EMAIL_LEAD`, Lead).pipe(Config.withDefault(defaults.lead))
  })

const QueueSize = WholeNumber(1, 1_000_000_000, "emails and jobs")

const QueueAgeSeconds = WholeNumber(1, 31_536_000, "seconds")

const ChunkConcurrency = WholeNumber(1, 64, "chunks")

const RequestsPerHour = WholeNumber(1, 1_000_000, "requests an hour")

const ordered = <A>(names: Thresholds<string>, thresholds: Thresholds<A>, atMost: (a: A, b: A) => boolean) =>
  atMost(thresholds.warning, thresholds.critical)
    ? Either.right(thresholds)
    : Either.left(ConfigError.InvalidData([], `${names.warning} must not be above ${names.critical}`))

/** What `alertsConfig` reads: settings to spread into those given to `layerSql` or `layerMemory`. */
export interface AlertsConfig
  extends Pick<AlertsSettings, "authTokenIssuer" | "authTokenLimit" | "healthThresholds" | "statusCallbackToken" | "wording">
{
  readonly delivery: Pick<DeliverySettings, "fanOutChunkConcurrency">
  /** Absent when `ALERTS_AUTH_TOKEN_SECRET` is unset: the host then decides (required in production). */
  readonly authTokenSecret?: Redacted.Redacted<string>
}

const defaults = defaultAlertsSettings.healthThresholds

/**
 * The email alert section of a host's configuration, read under `ALERTS_`: `ALERTS_AUTH_TOKEN_SECRET` (at least 32
 * characters), `ALERTS_AUTH_TOKEN_ISSUER`, `ALERTS_AUTH_TOKENS_PER_ADDRESS` and `ALERTS_AUTH_TOKENS_PER_CALLER` (an
 * hour), `ALERTS_QUEUE_SIZE_WARNING` and `_CRITICAL` (emails and jobs),
 * `ALERTS_QUEUE_AGE_WARNING_SECONDS` and `_CRITICAL_SECONDS`, `ALERTS_AUTH_TOKEN_EMAIL_SUBJECT` and `_LEAD` and
 * `ALERTS_SUBSCRIPTION_EMAIL_SUBJECT` and `_LEAD` (the wording of the confirmation emails), `ALERTS_FAN_OUT_CHUNK_CONCURRENCY` (chunks of one
 * notification written at once; each takes a database connection), and `NOTIFY_CALLBACK_BEARER_TOKEN` (the token of
 * Notify's status callbacks; unset, `/status-updates` is off). Each value names what it expects when it is wrong;
 * unset values take the defaults. `PUBLIC_SITE_URL` is the host's and comes in through the settings.
 */
export const alertsConfig: Config.Config<AlertsConfig> = Config.all({
  // not Config.option, which would also turn a wrong secret into none
  authTokenSecret: Schema.Config("AUTH_TOKEN_SECRET", Secret).pipe(
    Config.map(Option.some),
    Config.withDefault(Option.none<Redacted.Redacted<string>>())
  ),
  authTokenIssuer: Schema.Config("AUTH_TOKEN_ISSUER", Issuer).pipe(
    Config.withDefault(defaultAlertsSettings.authTokenIssuer)
  ),
  authTokenLimit: Config.all({
    perAddress: Schema.Config("AUTH_TOKENS_PER_ADDRESS", RequestsPerHour).pipe(
      Config.withDefault(defaultAlertsSettings.authTokenLimit.perAddress)
    ),
    perCaller: Schema.Config("AUTH_TOKENS_PER_CALLER", RequestsPerHour).pipe(
      Config.withDefault(defaultAlertsSettings.authTokenLimit.perCaller)
    )
  }).pipe(Config.map((limits) => ({ ...limits, window: Duration.hours(1) }))),
  wording: Config.all({
    authToken: wordingOf("AUTH_TOKEN", defaultAlertsSettings.wording.authToken),
    subscriptionConfirmation: wordingOf("SUBSCRIPTION", defaultAlertsSettings.wording.subscriptionConfirmation)
  }),
  fanOutChunkConcurrency: Schema.Config("FAN_OUT_CHUNK_CONCURRENCY", ChunkConcurrency).pipe(
    Config.withDefault(defaultDeliverySettings.fanOutChunkConcurrency)
  ),
  queueSize: Config.all({
    warning: Schema.Config("QUEUE_SIZE_WARNING", QueueSize).pipe(Config.withDefault(defaults.queueSize.warning)),
    critical: Schema.Config("QUEUE_SIZE_CRITICAL", QueueSize).pipe(Config.withDefault(defaults.queueSize.critical))
  }).pipe(Config.mapOrFail((sizes) => ordered({ warning: "QUEUE_SIZE_WARNING", critical: "QUEUE_SIZE_CRITICAL" }, sizes, (a, b) => a <= b))),
  queueAge: Config.all({
    warning: Schema.Config("QUEUE_AGE_WARNING_SECONDS", QueueAgeSeconds).pipe(
      Config.map(Duration.seconds),
      Config.withDefault(defaults.queueAge.warning)
    ),
    critical: Schema.Config("QUEUE_AGE_CRITICAL_SECONDS", QueueAgeSeconds).pipe(
      Config.map(Duration.seconds),
      Config.withDefault(defaults.queueAge.critical)
    )
  }).pipe(Config.mapOrFail((ages) =>
    ordered({ warning: "QUEUE_AGE_WARNING_SECONDS", critical: "QUEUE_AGE_CRITICAL_SECONDS" }, ages, Duration.lessThanOrEqualTo)
  ))
}).pipe(
  Config.map(({ authTokenIssuer, authTokenLimit, authTokenSecret, fanOutChunkConcurrency, queueAge, queueSize, wording }): AlertsConfig => ({
    authTokenIssuer,
    authTokenLimit,
    wording,
    delivery: { fanOutChunkConcurrency },
    healthThresholds: { queueSize, queueAge },
    ...Option.match(authTokenSecret, { onNone: () => ({}), onSome: (secret) => ({ authTokenSecret: secret }) })
  })),
  Config.nested("ALERTS"),
  Config.zipWith(
    Schema.Config("NOTIFY_CALLBACK_BEARER_TOKEN", CallbackToken).pipe(
      Config.map(Option.some),
      Config.withDefault(Option.none<Redacted.Redacted<string>>())
    ),
    (section, token): AlertsConfig => Option.isSome(token) ? { ...section, statusCallbackToken: token.value } : section
  )
)
