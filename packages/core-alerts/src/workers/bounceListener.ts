import { Effect, Layer, Runtime } from "effect"
import { deliveryStatusOf, emailIdOfVerpAddress, readDeliveryStatus } from "../domain/bounces"
import type { RecipientStatus } from "../domain/bounces"
import { Alerts } from "../services/Alerts"

export interface BounceListenerSettings {
  /** The bounce address (`bounces@example.org`): only its VERP addresses (`bounces+<email id>@...`) take mail. */
  readonly address: string
  readonly host: string
  readonly port: number
  /** The largest message taken (a bounce quotes the message it is about); 1 MiB unless said. */
  readonly maxMessageBytes?: number | undefined
}

const DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024

const smtpReply = (code: number, text: string) => Object.assign(new Error(text), { responseCode: code })

const DELIVERY_STATUS_TYPES = /^message\/(global-)?delivery-status$/i

/**
 * An SMTP listener that takes the bounces of the mail the `smtp` provider sends (delivery status notifications, RFC
 * 3464, to the VERP return path of each message), and keeps each as a delivery report of its email: a permanent
 * failure (5.x.x) ends the address's subscriptions. Mail for any other address is refused at RCPT, a message over the
 * size limit at DATA; one that is not a status notification is taken and dropped. When the report cannot be stored,
 * the sender is told to try again later (451). Listens while the layer's scope is open.
 */
export const bounceListenerLayer = (settings: BounceListenerSettings): Layer.Layer<never, never, Alerts> =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const alerts = yield* Alerts
    // loaded by the copies that listen only: every other process would carry a few MB of their code
    const [{ simpleParser }, { SMTPServer }] = yield* Effect.promise(() =>
      Promise.all([import("mailparser"), import("smtp-server")])
    )
    const runPromise = Runtime.runPromise(yield* Effect.runtime<never>())
    const maxBytes = settings.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES

    const record = (emailId: string, providerId: string, recipient: RecipientStatus) =>
      alerts.recordDeliveryReport({
        emailId,
        address: recipient.address,
        source: "bounce",
        providerId,
        status: deliveryStatusOf(recipient),
        detail: [recipient.status, recipient.diagnostic].filter((part) => part !== null).join(" ").slice(0, 1000),
        reportedAt: null
      }).pipe(
        Effect.tap((outcome) =>
          Effect.logInfo("Bounce received").pipe(Effect.annotateLogs({ email_id: emailId, status: recipient.status, outcome }))
        )
      )

    const server = new SMTPServer({
      logger: false,
      banner: "civicstack bounces",
      disabledCommands: ["AUTH", "STARTTLS"],
      authOptional: true,
      size: maxBytes,
      maxClients: 50,
      socketTimeout: 60_000,
      // at shutdown, a sender still connected is cut off after this: without its 250 it sends the bounce again later
      closeTimeout: 5_000,
      onRcptTo: (address, _session, callback) =>
        callback(
          emailIdOfVerpAddress(settings.address, address.address) === undefined
            ? smtpReply(550, "5.1.1 No such mailbox here")
            : null
        ),
      onData: (stream, session, callback) => {
        simpleParser(stream, { keepDeliveryStatus: true }).then(async (parsed) => {
          if (stream.sizeExceeded) return callback(smtpReply(552, `5.3.4 Messages are limited to ${maxBytes} bytes`))
          const emailIds = session.envelope.rcptTo.flatMap((rcpt) => emailIdOfVerpAddress(settings.address, rcpt.address) ?? [])
          const recipients = parsed.attachments
            .filter((part) => DELIVERY_STATUS_TYPES.test(part.contentType))
            .flatMap((part) => readDeliveryStatus(part.content.toString("utf8")))
          const providerId = parsed.messageId ?? `bounce-${session.id}`
          await runPromise(Effect.forEach(emailIds, (emailId) =>
            Effect.forEach(recipients, (recipient) => record(emailId, providerId, recipient), { discard: true }), {
            discard: true
          }))
          callback()
        }).catch((error: unknown) => {
          runPromise(Effect.logWarning("Could not take a bounce; its sender will try again", String(error)))
          callback(smtpReply(451, "4.3.0 Try again later"))
        })
      }
    })

    yield* Effect.acquireRelease(
      Effect.async<void, never>((resume) => {
        const failStart = (error: Error) => resume(Effect.die(error))
        server.once("error", failStart)
        server.listen(settings.port, settings.host, () => {
          server.off("error", failStart)
          // a connection's failure is the server's event too; unheard, it would end the process
          server.on("error", (error) => void runPromise(Effect.logDebug("Bounce listener connection failed", String(error))))
          resume(Effect.void)
        })
      }),
      () => Effect.async<void>((resume) => server.close(() => resume(Effect.void)))
    )
    yield* Effect.logInfo("Listening for bounces").pipe(
      Effect.annotateLogs({ address: `${settings.host}:${settings.port}`, bounce_address: settings.address })
    )
  }))
