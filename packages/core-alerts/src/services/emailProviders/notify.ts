import { makeOutboundClient } from "@civicstack/outbound"
import type { OutboundResponse } from "@civicstack/outbound"
import { Clock, Duration, Effect, Either, Layer, Redacted, Schema } from "effect"
import type { Scope } from "effect"
import { SignJWT } from "jose"
import { EmailProvider, PermanentDeliveryFailure, TemporaryDeliveryFailure } from "../EmailProvider"
import type { DeliveryFailure, OutgoingEmail } from "../EmailProvider"
import { isUuid } from "../../domain/ids"

export interface NotifyProviderSettings {
  /** Where the API is, e.g. `https://api.notifications.service.gov.uk`. */
  readonly baseUrl: string
  /** `{key_name}-{service_id}-{secret_key}`, as Notify hands it out. */
  readonly apiKey: Redacted.Redacted<string>
  /** A template whose subject is `((subject))` and whose body is `((body))`. */
  readonly templateId: string
  /** Let the API be on a loopback or private address (tests, a stand-in on an intranet). */
  readonly allowPrivateAddresses: boolean
  /** The whole request, from connecting to the last byte of the answer; 10 seconds unless said. */
  readonly timeout?: Duration.DurationInput | undefined
}

export interface NotifyApiKey {
  readonly keyName: string
  /** The JWT's issuer. */
  readonly serviceId: string
  /** The JWT's HS256 key. */
  readonly secretKey: Redacted.Redacted<string>
}

/** Splits a Notify API key from its end (key names may hold hyphens); the message never repeats the key. */
export const parseNotifyApiKey = (apiKey: string): Either.Either<NotifyApiKey, string> => {
  const key = apiKey.trim()
  const expected = "expected {key_name}-{service_id}-{secret_key}, where the service id and the secret key are UUIDs"
  if (key.length < 75 || key.at(-37) !== "-" || key.at(-74) !== "-") return Either.left(expected)
  const secretKey = key.slice(-36)
  const serviceId = key.slice(-73, -37)
  const keyName = key.slice(0, -74)
  if (!isUuid(serviceId)) return Either.left(`${expected}; the service id part is not a UUID`)
  if (!isUuid(secretKey)) return Either.left(`${expected}; the secret key part is not a UUID`)
  return Either.right({ keyName, serviceId, secretKey: Redacted.make(secretKey) })
}

const signBearerToken = (key: NotifyApiKey, issuedAtSeconds: number): Effect.Effect<string> =>
  Effect.promise(() =>
    new SignJWT({})
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setIssuer(key.serviceId)
      .setIssuedAt(issuedAtSeconds)
      .sign(new TextEncoder().encode(Redacted.value(key.secretKey)))
  )

/** The bearer token Notify expects: HS256 over `{iss: service id, iat: now}`; it refuses one more than 30 s off. */
export const notifyBearerToken = (key: NotifyApiKey): Effect.Effect<string> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => signBearerToken(key, Math.floor(now / 1000)))

/**
 * `notifyBearerToken`, signed once per second: `iat` is in whole seconds, so every token of one second is the same,
 * and signing one per email cost a tenth of the sender's CPU at a thousand emails a second (bench:alerts).
 */
const bearerTokenOncePerSecond = (key: NotifyApiKey): Effect.Effect<string> => {
  let latest: { readonly issuedAtSeconds: number; readonly token: string } | undefined
  return Effect.flatMap(Clock.currentTimeMillis, (now) => {
    const issuedAtSeconds = Math.floor(now / 1000)
    if (latest?.issuedAtSeconds === issuedAtSeconds) return Effect.succeed(latest.token)
    return Effect.tap(signBearerToken(key, issuedAtSeconds), (token) => {
      latest = { issuedAtSeconds, token }
    })
  })
}

const NotifyErrors = Schema.parseJson(Schema.Struct({
  errors: Schema.Array(Schema.Struct({ error: Schema.String, message: Schema.String }))
}))
const decodeNotifyErrors = Schema.decodeUnknownOption(NotifyErrors)

/** What Notify said was wrong, from its `{"errors": [{"error", "message"}]}` body or, failing that, the body's start. */
const providerMessage = (body: Uint8Array): { readonly text: string; readonly messages: ReadonlyArray<string> } => {
  const raw = new TextDecoder().decode(body)
  const decoded = decodeNotifyErrors(raw)
  if (decoded._tag === "Some" && decoded.value.errors.length > 0) {
    const messages = decoded.value.errors.map(({ error, message }) => `${error}: ${message}`)
    return { text: messages.join("; "), messages }
  }
  const text = raw.trim().slice(0, 500)
  return { text: text === "" ? "no message" : text, messages: [] }
}

const firstHeader = (response: OutboundResponse, name: string): string | undefined => {
  const value = response.headers[name]
  return typeof value === "string" ? value : value?.[0]
}

/** Retry-After in seconds or as an HTTP date, as milliseconds from now; absent or unreadable gives undefined. */
export const retryAfterMillis = (value: string | undefined, now: number): number | undefined => {
  if (value === undefined) return undefined
  const trimmed = value.trim()
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000
  const date = Date.parse(trimmed)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

const aboutTheAddress = /email[_ ]address|recipient/i

/**
 * 429, 5xx and 408 are worth retrying; so are 401 and 403, which say this service's key or clock is wrong, not the
 * reader's address. A 400 about the address is permanent for it; any other 4xx refuses this message for good.
 */
const classifyAnswer = (response: OutboundResponse, now: number): DeliveryFailure | undefined => {
  const { status } = response
  if (status >= 200 && status < 300) return undefined
  const said = providerMessage(response.body)
  if (status === 429 || status === 408 || status >= 500) {
    const retryAfter = retryAfterMillis(firstHeader(response, "retry-after"), now)
    return new TemporaryDeliveryFailure({
      reason: `Notify answered ${status}: ${said.text}`,
      ...(retryAfter === undefined ? {} : { retryAfterMillis: retryAfter })
    })
  }
  if (status === 401 || status === 403) {
    return new TemporaryDeliveryFailure({ reason: `Notify refused this service's credentials (${status}): ${said.text}` })
  }
  if (status === 400 && said.messages.some((message) => aboutTheAddress.test(message))) {
    return new PermanentDeliveryFailure({ reason: `Notify refused the address: ${said.text}`, addressRejected: true })
  }
  return new PermanentDeliveryFailure({
    reason: `Notify refused the message (${status}): ${said.text}`,
    addressRejected: false
  })
}

const DEFAULT_TIMEOUT = Duration.seconds(10)

/** Sends each email through a GOV.UK Notify-style API: one template whose personalisation carries subject and body. */
export const makeNotifyProvider = (
  settings: NotifyProviderSettings
): Effect.Effect<EmailProvider["Type"], never, Scope.Scope> =>
  Effect.gen(function*() {
    const key = yield* Either.match(parseNotifyApiKey(Redacted.value(settings.apiKey)), {
      onLeft: (problem) => Effect.dieMessage(`Notify API key: ${problem}`),
      onRight: Effect.succeed
    })
    const timeout = settings.timeout ?? DEFAULT_TIMEOUT
    const client = yield* makeOutboundClient({
      allowPrivateAddresses: settings.allowPrivateAddresses,
      connectTimeout: timeout,
      responseTimeout: timeout,
      totalTimeout: timeout,
      userAgent: "civicstack-core-alerts",
      maxResponseBytes: 64 * 1024
    })
    const endpoint = `${settings.baseUrl.replace(/\/+$/, "")}/v2/notifications/email`
    const bearerToken = bearerTokenOncePerSecond(key)
    const send = (email: OutgoingEmail): Effect.Effect<void, DeliveryFailure> =>
      Effect.gen(function*() {
        const token = yield* bearerToken
        const body = JSON.stringify({
          email_address: email.address,
          template_id: settings.templateId,
          personalisation: { subject: email.subject, body: email.body },
          reference: email.id,
          ...(email.unsubscribeUrl === undefined ? {} : { one_click_unsubscribe_url: email.unsubscribeUrl })
        })
        const response = yield* client.request(endpoint, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
          body
        }).pipe(
          Effect.mapError((failure) =>
            new TemporaryDeliveryFailure({ reason: `no answer from Notify (${failure.reason}): ${failure.detail}` })
          )
        )
        const failure = classifyAnswer(response, yield* Clock.currentTimeMillis)
        if (failure !== undefined) return yield* failure
      })
    return { name: "notify", send }
  })

export const notifyProviderLayer = (settings: NotifyProviderSettings): Layer.Layer<EmailProvider> =>
  Layer.scoped(EmailProvider, makeNotifyProvider(settings))
