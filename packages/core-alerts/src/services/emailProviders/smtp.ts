import { Duration, Effect, Either, Layer, Redacted, Runtime } from "effect"
import type { Scope } from "effect"
import { createTransport } from "nodemailer"
import { EmailProvider, PermanentDeliveryFailure, TemporaryDeliveryFailure } from "../EmailProvider"
import type { DeliveryFailure, OutgoingEmail } from "../EmailProvider"
import { verpAddress } from "../../domain/bounces"
import { renderEmail } from "../../domain/render"
import { unsubscribeHeaders } from "./headers"

export interface SmtpProviderSettings {
  /** `smtp://user:pass@host:port` (STARTTLS when the server offers it) or `smtps://...` (TLS from the start). */
  readonly url: Redacted.Redacted<string>
  /** The From header, e.g. `GOV.UK emails <alerts@example.org>`. */
  readonly from: string
  /** How long one message may take, queueing for a pooled connection included; 30 seconds unless said. */
  readonly sendTimeout?: Duration.DurationInput | undefined
  /** Connections the pool keeps open at most; 5 unless said. */
  readonly maxConnections?: number | undefined
  /**
   * Where bounces go: each message's envelope sender is this address with the email's id after a `+`
   * (`bounces+<id>@example.org`), so that a bounce names the email it is about. Unset, the From address.
   */
  readonly bounceAddress?: string | undefined
}

export interface SmtpEndpoint {
  readonly host: string
  readonly port: number | undefined
  readonly secure: boolean
  readonly auth: { readonly user: string; readonly pass: string } | undefined
}

/** Reads an SMTP URL; the message on the left says what is wrong without repeating the URL (it holds a password). */
export const parseSmtpUrl = (url: string): Either.Either<SmtpEndpoint, string> => {
  if (!URL.canParse(url)) return Either.left("expected a URL such as smtp://user:pass@host:587")
  const parsed = new URL(url)
  if (parsed.protocol !== "smtp:" && parsed.protocol !== "smtps:") {
    return Either.left(`expected the smtp: or smtps: scheme, not ${parsed.protocol}`)
  }
  if (parsed.hostname === "") return Either.left("expected a host name, as in smtp://user:pass@host:587")
  const user = decodeURIComponent(parsed.username)
  return Either.right({
    host: parsed.hostname.replace(/^\[(.*)\]$/, "$1"),
    port: parsed.port === "" ? undefined : Number(parsed.port),
    secure: parsed.protocol === "smtps:",
    auth: user === "" ? undefined : { user, pass: decodeURIComponent(parsed.password) }
  })
}

interface SmtpError {
  readonly code?: unknown
  readonly command?: unknown
  readonly response?: unknown
  readonly responseCode?: unknown
  readonly message?: unknown
}

/** RFC 3463 statuses about the destination mailbox itself: bad mailbox, system or syntax; moved; disabled. */
const mailboxStatus = /\b5\.(1\.[1236]|1\.10|2\.1)\b/
/** Any RFC 3463 enhanced status code in a reply. */
const enhancedStatus = /\b[245]\.\d{1,3}\.\d{1,3}\b/

/** The basic replies to RCPT TO that, without an enhanced status, refuse the mailbox itself (RFC 5321 4.2.3). */
const MAILBOX_REFUSALS = new Set([550, 551, 553])

/** RFC 3463 security or policy statuses: relaying denied, authentication required, the sender not allowed. */
const policyStatus = /\b5\.7\.\d{1,3}\b/

/** Authentication failed or is required (RFC 4954). */
const AUTHENTICATION_REFUSALS = new Set([530, 534, 535, 538])

/**
 * Whether a refusal is about the service as a sender rather than this email: a policy status, an authentication
 * failure, or a refusal of MAIL FROM. Every email would meet it, so delivery pauses.
 */
const refusesSender = (command: unknown, said: string, responseCode: number, code: unknown): boolean =>
  code === "EAUTH" || AUTHENTICATION_REFUSALS.has(responseCode) ||
  (responseCode >= 500 && (policyStatus.test(said) || (typeof command === "string" && command.toUpperCase().startsWith("MAIL"))))

/**
 * A 5xx reply is about the address only when it says so: a mailbox status, or, to RCPT TO without an enhanced status,
 * 550, 551 or 553. A relay, policy or authentication refusal (`550 5.7.1 Relaying denied`), or any 5xx to AUTH,
 * MAIL FROM or DATA without a mailbox status, says the server refuses this sender or message, nothing of the reader:
 * the email is tried again later and no subscription ends.
 */
export const classifySmtpFailure = (error: unknown): DeliveryFailure => {
  const { code, command, message, response, responseCode } = (typeof error === "object" && error !== null
    ? error
    : {}) as SmtpError
  const said = typeof response === "string" ? response : typeof message === "string" ? message : String(error)
  if (typeof responseCode === "number" && responseCode >= 500 && responseCode !== 503) {
    const toRecipient = typeof command === "string" && command.toUpperCase().startsWith("RCPT")
    const aboutRecipient = enhancedStatus.test(said)
      ? mailboxStatus.test(said)
      : toRecipient && MAILBOX_REFUSALS.has(responseCode)
    if (aboutRecipient) return new PermanentDeliveryFailure({ reason: `the SMTP server refused the address: ${said}`, addressRejected: true })
    return new TemporaryDeliveryFailure({
      reason: `the SMTP server refused the message (${String(command ?? "no command")}): ${said}`,
      senderRefused: refusesSender(command, said, responseCode, code)
    })
  }
  if (typeof responseCode === "number") {
    return new TemporaryDeliveryFailure({
      reason: `the SMTP server answered ${responseCode}: ${said}`,
      senderRefused: refusesSender(command, said, responseCode, code)
    })
  }
  return new TemporaryDeliveryFailure({
    reason: `no answer from the SMTP server${typeof code === "string" ? ` (${code})` : ""}: ${said}`
  })
}

const DEFAULT_SEND_TIMEOUT = Duration.seconds(30)

/**
 * The Message-ID of an email: its row's id at the From address's domain. A message sent again (a copy stopped between
 * sending it and recording it) carries the same one, so mail systems and readers can recognise the repeat.
 */
const messageIdOf = (emailId: string, from: string) => {
  const domain = /@([^\s<>@]+)>?\s*$/.exec(from)?.[1] ?? "civicstack.invalid"
  return `<${emailId}@${domain}>`
}

/** Sends each email as text and HTML through a pool of SMTP connections, closed with the scope. */
export const makeSmtpProvider = (
  settings: SmtpProviderSettings
): Effect.Effect<EmailProvider["Type"], never, Scope.Scope> =>
  Effect.gen(function*() {
    const endpoint = yield* Either.match(parseSmtpUrl(Redacted.value(settings.url)), {
      onLeft: (problem) => Effect.dieMessage(`SMTP URL: ${problem}`),
      onRight: Effect.succeed
    })
    const sendTimeout = Duration.decode(settings.sendTimeout ?? DEFAULT_SEND_TIMEOUT)
    const timeoutMillis = Duration.toMillis(sendTimeout)
    const transport = yield* Effect.acquireRelease(
      Effect.sync(() =>
        createTransport({
          pool: true,
          host: endpoint.host,
          ...(endpoint.port === undefined ? {} : { port: endpoint.port }),
          secure: endpoint.secure,
          ...(endpoint.auth === undefined ? {} : { auth: { ...endpoint.auth } }),
          maxConnections: settings.maxConnections ?? 5,
          connectionTimeout: timeoutMillis,
          greetingTimeout: timeoutMillis,
          socketTimeout: timeoutMillis
        })
      ),
      (transport) => Effect.sync(() => transport.close())
    )
    // an error on an idle pooled connection is emitted, and an emitter with no listener would end the process
    const runtime = yield* Effect.runtime<never>()
    transport.on("error", (error) => {
      Runtime.runFork(runtime)(
        Effect.logWarning("the SMTP connection pool reported an error").pipe(
          Effect.annotateLogs({ error: error instanceof Error ? error.message : String(error) })
        )
      )
    })
    const send = (email: OutgoingEmail): Effect.Effect<void, DeliveryFailure> => {
      const { html, text } = renderEmail({ subject: email.subject, body: email.body })
      return Effect.tryPromise({
        try: (signal) =>
          transport.sendMail({
            from: settings.from,
            to: email.address,
            subject: email.subject,
            text,
            html,
            messageId: messageIdOf(email.id, settings.from),
            ...(settings.bounceAddress === undefined
              ? {}
              : { envelope: { from: verpAddress(settings.bounceAddress, email.id), to: email.address } }),
            headers: { ...unsubscribeHeaders(email.unsubscribeUrl) },
            signal
          }),
        catch: classifySmtpFailure
      }).pipe(
        Effect.timeoutFail({
          duration: sendTimeout,
          onTimeout: () =>
            new TemporaryDeliveryFailure({
              reason: `the SMTP server did not take the message within ${Duration.format(sendTimeout)}`
            })
        }),
        Effect.asVoid,
        Effect.withSpan("smtp send", { kind: "client", attributes: { "server.address": endpoint.host } })
      )
    }
    return { name: "smtp", send }
  })

export const smtpProviderLayer = (settings: SmtpProviderSettings): Layer.Layer<EmailProvider> =>
  Layer.scoped(EmailProvider, makeSmtpProvider(settings))
