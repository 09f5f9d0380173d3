import { describe, expect, it } from "@effect/vitest"
import type { ParsedMail } from "mailparser"
import { Duration, Effect, Either, Exit, Redacted, Scope } from "effect"
import { PermanentDeliveryFailure, TemporaryDeliveryFailure } from "../../../src/services/EmailProvider"
import type { OutgoingEmail } from "../../../src/services/EmailProvider"
import { makeSmtpProvider, parseSmtpUrl } from "../../../src/services/emailProviders/smtp"
import type { SmtpProviderSettings } from "../../../src/services/emailProviders/smtp"
import { startSilentServer, startSmtpServer } from "../../fixtures/smtpServer"

const email: OutgoingEmail = {
  id: "5b0f4f52-7a0e-4a4f-8d55-6d3c2b1a0f01",
  address: "reader@example.org",
  subject: "Changes to VAT rates",
  body: "# VAT\n\nThe rates [have changed](https://www.gov.uk/vat-rates).",
  unsubscribeUrl: "https://alerts.example.org/unsubscribe/0a1b?token=x&y=1"
}

const provider = (settings: Omit<SmtpProviderSettings, "url" | "from"> & { readonly url: string }) =>
  makeSmtpProvider({ from: "GOV.UK emails <alerts@example.org>", ...settings, url: Redacted.make(settings.url) })

/** The header as it was sent, unfolded (mailparser files the List-* headers under one parsed `list` entry). */
const headerValue = (parsed: ParsedMail, name: string): string | undefined => {
  const line = parsed.headerLines.find((header) => header.key === name.toLowerCase())?.line
  return line?.slice(line.indexOf(":") + 1).replace(/\r?\n[ \t]+/g, " ").trim()
}

const sendFailure = (provider: Effect.Effect.Success<ReturnType<typeof makeSmtpProvider>>, message: OutgoingEmail) =>
  Effect.flip(provider.send(message))

describe("smtp provider", () => {
  it.scopedLive("sends text and HTML with From, To, Subject and the one-click unsubscribe headers", () =>
    Effect.gen(function*() {
      const server = yield* startSmtpServer()
      const smtp = yield* provider({ url: server.url })
      yield* smtp.send(email)
      expect(server.received).toHaveLength(1)
      const { envelopeFrom, envelopeTo, parsed } = server.received[0]!
      expect(server.logins).toEqual(["user:p@ss word"])
      expect(envelopeFrom).toBe("alerts@example.org")
      expect(envelopeTo).toEqual(["reader@example.org"])
      expect(parsed.from?.value).toEqual([{ name: "GOV.UK emails", address: "alerts@example.org" }])
      expect(parsed.to).toMatchObject({ value: [{ address: "reader@example.org" }] })
      expect(parsed.subject).toBe("Changes to VAT rates")
      expect(headerValue(parsed, "List-Unsubscribe-Post")).toBe("List-Unsubscribe=One-Click")
      expect(headerValue(parsed, "List-Unsubscribe")).toBe("<https://alerts.example.org/unsubscribe/0a1b?token=x&y=1>")
      expect(parsed.text).toContain("The rates have changed (https://www.gov.uk/vat-rates).")
      expect(parsed.html).toContain("<a href=\"https://www.gov.uk/vat-rates\">have changed</a>")
      expect(parsed.html).toContain("<title>Changes to VAT rates</title>")
      expect(parsed.headers.get("content-type")).toMatchObject({ value: "multipart/alternative" })
    }))

  it.scopedLive("with a bounce address, the envelope sender is its VERP address for the email; From stays", () =>
    Effect.gen(function*() {
      const server = yield* startSmtpServer()
      const smtp = yield* provider({ url: server.url, bounceAddress: "bounces@alerts.example.org" })
      yield* smtp.send(email)
      const { envelopeFrom, envelopeTo, parsed } = server.received[0]!
      expect(envelopeFrom).toBe(`bounces+${email.id}@alerts.example.org`)
      expect(envelopeTo).toEqual(["reader@example.org"])
      expect(parsed.from?.value).toEqual([{ name: "GOV.UK emails", address: "alerts@example.org" }])
    }))

  it.scopedLive("the Message-ID is the email's id at the sender's domain, the same when the email is sent again", () =>
    Effect.gen(function*() {
      const server = yield* startSmtpServer()
      const smtp = yield* provider({ url: server.url })
      yield* smtp.send(email)
      yield* smtp.send(email)
      yield* smtp.send({ ...email, id: "another-email" })
      expect(server.received.map(({ parsed }) => parsed.messageId)).toEqual([
        "<5b0f4f52-7a0e-4a4f-8d55-6d3c2b1a0f01@example.org>",
        "<5b0f4f52-7a0e-4a4f-8d55-6d3c2b1a0f01@example.org>",
        "<another-email@example.org>"
      ])
    }))

  it.scopedLive("leaves the unsubscribe headers out when there is no unsubscribe link", () =>
    Effect.gen(function*() {
      const server = yield* startSmtpServer()
      const smtp = yield* provider({ url: server.url })
      const { unsubscribeUrl: _, ...withoutLink } = email
      yield* smtp.send(withoutLink)
      const { parsed } = server.received[0]!
      expect(headerValue(parsed, "List-Unsubscribe")).toBeUndefined()
      expect(headerValue(parsed, "List-Unsubscribe-Post")).toBeUndefined()
    }))

  it.scopedLive("a 550 to RCPT TO is a permanent failure", () =>
    Effect.gen(function*() {
      const server = yield* startSmtpServer({
        refuseRecipients: { "gone@example.org": [550, "5.1.1 No such user here"] }
      })
      const smtp = yield* provider({ url: server.url })
      const failure = yield* sendFailure(smtp, { ...email, address: "gone@example.org" })
      expect(failure).toBeInstanceOf(PermanentDeliveryFailure)
      expect(failure).toMatchObject({ addressRejected: true })
      expect(failure.reason).toContain("No such user")
      yield* smtp.send(email)
      expect(server.received.map((m) => m.envelopeTo)).toEqual([["reader@example.org"]])
    }))

  it.scopedLive("a 553 to RCPT TO without an enhanced status is permanent", () =>
    Effect.gen(function*() {
      const server = yield* startSmtpServer({
        refuseRecipients: { "odd@example.org": [553, "Mailbox name not allowed"] }
      })
      const smtp = yield* provider({ url: server.url })
      const failure = yield* sendFailure(smtp, { ...email, address: "odd@example.org" })
      expect(failure).toBeInstanceOf(PermanentDeliveryFailure)
      expect(failure.reason).toContain("Mailbox name not allowed")
    }))

  it.scopedLive("a relay or policy refusal to RCPT TO is not blamed on the address: temporary, no subscription ends", () =>
    Effect.gen(function*() {
      const server = yield* startSmtpServer({
        refuseRecipients: {
          "relay@example.org": [550, "5.7.1 Relaying denied"],
          "policy@example.org": [554, "5.7.26 Unauthenticated email is not accepted"],
          "vague@example.org": [554, "Transaction failed"]
        }
      })
      const smtp = yield* provider({ url: server.url })
      // a relay or policy refusal meets every email: it says the service may not send, and delivery pauses
      for (const [address, senderRefused] of [["relay@example.org", true], ["policy@example.org", true], ["vague@example.org", false]] as const) {
        const failure = yield* sendFailure(smtp, { ...email, address })
        expect({ address, temporary: failure instanceof TemporaryDeliveryFailure, senderRefused: failure._tag === "TemporaryDeliveryFailure" && failure.senderRefused === true })
          .toEqual({ address, temporary: true, senderRefused })
      }
    }))

  it.scopedLive("a 451 to RCPT TO is a temporary failure", () =>
    Effect.gen(function*() {
      const server = yield* startSmtpServer({
        refuseRecipients: { "busy@example.org": [451, "4.3.0 Try again later"] }
      })
      const smtp = yield* provider({ url: server.url })
      const failure = yield* sendFailure(smtp, { ...email, address: "busy@example.org" })
      expect(failure).toBeInstanceOf(TemporaryDeliveryFailure)
      expect(failure.reason).toContain("Try again later")
      expect(failure).not.toMatchObject({ senderRefused: true })
    }))

  it.scopedLive("a 5xx about the message or the sender is not blamed on the address", () =>
    Effect.gen(function*() {
      const server = yield* startSmtpServer({ refuseData: [554, "5.7.1 Message refused by policy"] })
      const smtp = yield* provider({ url: server.url })
      expect(yield* sendFailure(smtp, email)).toMatchObject({ _tag: "TemporaryDeliveryFailure", senderRefused: true })
      const withWrongPassword = yield* provider({ url: server.url.replace("p%40ss", "nope") })
      const authFailure = yield* sendFailure(withWrongPassword, email)
      expect(authFailure).toMatchObject({ _tag: "TemporaryDeliveryFailure", senderRefused: true })
    }))

  it.scopedLive("a 5xx at the end of DATA with a mailbox status is permanent", () =>
    Effect.gen(function*() {
      const server = yield* startSmtpServer({ refuseData: [550, "5.1.1 Mailbox does not exist"] })
      const smtp = yield* provider({ url: server.url })
      expect(yield* sendFailure(smtp, email)).toBeInstanceOf(PermanentDeliveryFailure)
    }))

  it.scopedLive("a server that never answers is a temporary failure within the send timeout", () =>
    Effect.gen(function*() {
      const silent = yield* startSilentServer
      const smtp = yield* provider({ url: silent.url, sendTimeout: "400 millis" })
      const started = Date.now()
      const failure = yield* sendFailure(smtp, email)
      const waited = Date.now() - started
      expect(failure).toBeInstanceOf(TemporaryDeliveryFailure)
      expect(waited).toBeGreaterThanOrEqual(350)
      expect(waited).toBeLessThan(3_000)
    }))

  it.scopedLive("a refused connection is a temporary failure", () =>
    Effect.gen(function*() {
      const server = yield* startSmtpServer()
      const closedPort = server.port
      yield* Effect.promise(() => new Promise<void>((resolve) => server.server.close(() => resolve())))
      const smtp = yield* provider({ url: `smtp://127.0.0.1:${closedPort}`, sendTimeout: Duration.seconds(5) })
      const failure = yield* sendFailure(smtp, email)
      expect(failure).toBeInstanceOf(TemporaryDeliveryFailure)
    }))

  it.live("closes its pooled connections when its scope closes", () =>
    Effect.gen(function*() {
      const serverScope = yield* Scope.make()
      const server = yield* startSmtpServer().pipe(Scope.extend(serverScope))
      const providerScope = yield* Scope.make()
      const smtp = yield* provider({ url: server.url }).pipe(Scope.extend(providerScope))
      yield* smtp.send(email)
      expect(server.server.connections.size).toBe(1)
      yield* Scope.close(providerScope, Exit.void)
      const deadline = Date.now() + 3_000
      while (server.server.connections.size > 0 && Date.now() < deadline) yield* Effect.sleep("20 millis")
      expect(server.server.connections.size).toBe(0)
      yield* Scope.close(serverScope, Exit.void)
    }))
})

describe("parseSmtpUrl", () => {
  it("reads host, port, TLS and percent-encoded credentials", () => {
    expect(parseSmtpUrl("smtp://me%40host:p%2Fw@mail.example.org:587")).toEqual(Either.right({
      host: "mail.example.org",
      port: 587,
      secure: false,
      auth: { user: "me@host", pass: "p/w" }
    }))
    expect(parseSmtpUrl("smtps://mail.example.org")).toEqual(Either.right({
      host: "mail.example.org",
      port: undefined,
      secure: true,
      auth: undefined
    }))
  })

  it("names what is wrong without repeating the URL", () => {
    const problem = (url: string) => Either.getLeft(parseSmtpUrl(url))
    expect(problem("https://user:secret@mail.example.org")._tag).toBe("Some")
    expect(String(problem("https://user:secret@mail.example.org"))).not.toContain("secret")
    expect(problem("not a url")._tag).toBe("Some")
    expect(problem("smtp://")._tag).toBe("Some")
  })
})
