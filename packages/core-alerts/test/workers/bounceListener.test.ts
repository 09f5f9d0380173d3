import { freePort } from "@civicstack/kit/testing"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { createTransport } from "nodemailer"
import { layerMemory } from "../../src/layers"
import type { Alerts } from "../../src/services/Alerts"
import { AlertsParts } from "../../src/services/AlertsParts"
import { AlertsStore } from "../../src/storage/AlertsStore"
import { bounceListenerLayer } from "../../src/workers/bounceListener"
import { subscriberTo, topicList } from "../fixtures/records"

const BOUNCES = "bounces@alerts.example.org"

const dsn = (emailId: string, recipient: string, status: string, messageId: string) =>
  [
    "From: MAILER-DAEMON@mx.example.net",
    `To: bounces+${emailId}@alerts.example.org`,
    "Subject: Undelivered Mail Returned to Sender",
    `Message-ID: <${messageId}@mx.example.net>`,
    "MIME-Version: 1.0",
    "Content-Type: multipart/report; report-type=delivery-status; boundary=\"REPORT\"",
    "",
    "--REPORT",
    "Content-Type: text/plain",
    "",
    "Your message could not be delivered.",
    "--REPORT",
    "Content-Type: message/delivery-status",
    "",
    "Reporting-MTA: dns; mx.example.net",
    "",
    `Final-Recipient: rfc822; ${recipient}`,
    "Action: failed",
    `Status: ${status}`,
    `Diagnostic-Code: smtp; 550 ${status} mailbox unavailable`,
    "",
    "--REPORT",
    "Content-Type: text/rfc822-headers",
    "",
    "Subject: Changes to VAT rates",
    "--REPORT--",
    ""
  ].join("\r\n")

/** A bounce as a mail server sends one: from the null sender, to the VERP address. */
const sendBounce = (port: number, to: string, raw: string) =>
  Effect.tryPromise({
    try: () => createTransport({ host: "127.0.0.1", port, secure: false, ignoreTLS: true }).sendMail({ envelope: { from: "", to }, raw }),
    catch: (error) => error as Error
  })

/** The service in memory with Ann subscribed to one list and an email sent to her; the listener on a free port. */
const withListener = <A, E>(
  body: (setup: { readonly port: number; readonly emailId: string }) => Effect.Effect<A, E, Alerts | AlertsParts>,
  maxMessageBytes?: number
) =>
  Effect.gen(function*() {
    const port = yield* Effect.promise(freePort)
    const service = layerMemory({ publicSiteUrl: "https://www.example.org" })
    return yield* Effect.gen(function*() {
      const { emailStore, store } = yield* AlertsParts
      const list = yield* topicList("Tax", "tax").pipe(Effect.provideService(AlertsStore, store))
      yield* subscriberTo("ann@example.org", [list.id]).pipe(Effect.provideService(AlertsStore, store))
      const emailId = yield* emailStore.queueEmail({ address: "ann@example.org", subject: "News", body: "x" })
      return yield* body({ port, emailId })
    }).pipe(
      Effect.provide(Layer.provideMerge(bounceListenerLayer({ address: BOUNCES, host: "127.0.0.1", port, maxMessageBytes }), service))
    )
  }).pipe(Effect.scoped)

const annIsActive = Effect.flatMap(AlertsParts, ({ store }) =>
  Effect.map(store.subscriberByAddress("ann@example.org"), (found) => Option.getOrThrow(found).deactivatedAt === null))

const reportsOf = (emailId: string) => Effect.flatMap(AlertsParts, ({ emailStore }) => emailStore.deliveryReportsOf(emailId))

describe("the bounce listener", () => {
  it.live("a permanent failure (5.x.x) for the email's address ends its subscriptions; the report is kept once", () =>
    withListener(({ emailId, port }) =>
      Effect.gen(function*() {
        const to = `bounces+${emailId}@alerts.example.org`
        yield* sendBounce(port, to, dsn(emailId, "ann@example.org", "5.1.1", "dsn-1"))
        yield* sendBounce(port, to, dsn(emailId, "ann@example.org", "5.1.1", "dsn-1"))
        expect(yield* annIsActive).toBe(false)
        expect(yield* reportsOf(emailId)).toEqual([expect.objectContaining({
          source: "bounce",
          providerId: "<dsn-1@mx.example.net>",
          status: "permanent-failure",
          detail: "5.1.1 smtp; 550 5.1.1 mailbox unavailable"
        })])
      })
    ))

  it.live("a temporary failure is kept and ends nothing; a bounce naming another address changes nothing", () =>
    withListener(({ emailId, port }) =>
      Effect.gen(function*() {
        const to = `bounces+${emailId}@alerts.example.org`
        yield* sendBounce(port, to, dsn(emailId, "ann@example.org", "4.2.2", "dsn-2"))
        yield* sendBounce(port, to, dsn(emailId, "someone@else.example", "5.1.1", "dsn-3"))
        // not a status report at all (an auto-reply): taken, and dropped
        yield* sendBounce(port, to, "From: ann@example.org\r\nSubject: Out of office\r\n\r\nBack on Monday.\r\n")
        expect(yield* annIsActive).toBe(true)
        expect((yield* reportsOf(emailId)).map((report) => report.status)).toEqual(["temporary-failure"])
      })
    ))

  it.live("refuses mail for any other address, and messages over the size limit", () =>
    withListener(({ emailId, port }) =>
      Effect.gen(function*() {
        const elsewhere = yield* Effect.flip(sendBounce(port, "postmaster@alerts.example.org", dsn(emailId, "ann@example.org", "5.1.1", "x")))
        expect(elsewhere.message).toContain("550")
        const forged = yield* Effect.flip(sendBounce(port, "bounces+not-an-id@alerts.example.org", dsn(emailId, "ann@example.org", "5.1.1", "y")))
        expect(forged.message).toContain("550")
        const large = `${dsn(emailId, "ann@example.org", "5.1.1", "z")}${"x".repeat(5000)}\r\n`
        const tooLarge = yield* Effect.flip(sendBounce(port, `bounces+${emailId}@alerts.example.org`, large))
        expect(tooLarge.message).toContain("552")
        expect(yield* annIsActive).toBe(true)
        expect(yield* reportsOf(emailId)).toEqual([])
      }), 4000))
})
