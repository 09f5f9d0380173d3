import * as Http from "node:http"
import type * as Net from "node:net"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Redacted, TestClock } from "effect"
import { PermanentDeliveryFailure, TemporaryDeliveryFailure } from "../../../src/services/EmailProvider"
import type { OutgoingEmail } from "../../../src/services/EmailProvider"
import { makeNotifyProvider, parseNotifyApiKey, retryAfterMillis } from "../../../src/services/emailProviders/notify"
import type { NotifyProviderSettings } from "../../../src/services/emailProviders/notify"
import { answers, apiKey, secretKey, serviceId, startNotifyServer } from "../../fixtures/notifyServer"

const templateId = "f33517ff-2a88-4f6e-b855-c550268ce08a"

const email: OutgoingEmail = {
  id: "8d2f3a43-6f0e-4f8e-a7c2-0b9f3e1d2c01",
  address: "reader@example.org",
  subject: "Changes to VAT rates",
  body: "# VAT\n\nThe rates [have changed](https://www.gov.uk/vat-rates).",
  unsubscribeUrl: "https://alerts.example.org/unsubscribe/0a1b"
}

const notify = (baseUrl: string, overrides: Partial<Omit<NotifyProviderSettings, "apiKey">> & { apiKey?: string } = {}) =>
  makeNotifyProvider({
    baseUrl,
    templateId,
    allowPrivateAddresses: true,
    ...overrides,
    apiKey: Redacted.make(overrides.apiKey ?? apiKey)
  })

describe("notify provider", () => {
  it.scoped("posts the template, personalisation and reference with a bearer JWT issued by the service now", () =>
    Effect.gen(function*() {
      const server = yield* startNotifyServer()
      yield* TestClock.setTime(Date.parse("2026-11-25T08:30:15.900Z"))
      const provider = yield* notify(`${server.baseUrl}/`)
      yield* provider.send(email)
      expect(server.calls).toHaveLength(1)
      const [call] = server.calls
      expect(call!.contentType).toBe("application/json")
      expect(call!.claims).toEqual({ iss: serviceId, iat: Date.parse("2026-11-25T08:30:15Z") / 1000 })
      expect(call!.body).toEqual({
        email_address: "reader@example.org",
        template_id: templateId,
        personalisation: { subject: "Changes to VAT rates", body: email.body },
        reference: email.id,
        one_click_unsubscribe_url: "https://alerts.example.org/unsubscribe/0a1b"
      })
    }))

  it.scoped("signs a token issued in the second of each send, never one from an earlier second", () =>
    Effect.gen(function*() {
      const server = yield* startNotifyServer()
      yield* TestClock.setTime(Date.parse("2026-11-25T08:30:15.100Z"))
      const provider = yield* notify(server.baseUrl)
      yield* provider.send(email)
      yield* TestClock.adjust("800 millis")
      yield* provider.send(email)
      yield* TestClock.adjust("45 seconds")
      yield* provider.send(email)
      const issuedAt = server.calls.map((call) => (call.claims as { iat: number }).iat)
      const second = Date.parse("2026-11-25T08:30:15Z") / 1000
      expect(issuedAt).toEqual([second, second, second + 45])
      expect(server.calls[1]!.authorization).toBe(server.calls[0]!.authorization)
      expect(server.calls[2]!.authorization).not.toBe(server.calls[0]!.authorization)
    }))

  it.scoped("leaves the unsubscribe link out when there is none", () =>
    Effect.gen(function*() {
      const server = yield* startNotifyServer()
      const { unsubscribeUrl: _, ...withoutLink } = email
      yield* (yield* notify(server.baseUrl)).send(withoutLink)
      expect(Object.keys(server.calls[0]!.body as object)).not.toContain("one_click_unsubscribe_url")
    }))

  it.scoped("a token signed with another secret is refused by the API, and that is not the address's fault", () =>
    Effect.gen(function*() {
      const server = yield* startNotifyServer()
      const otherSecret = "0b1f6d64-4a1e-4c1f-9e55-2d5f0c9a7e11"
      const provider = yield* notify(server.baseUrl, { apiKey: `alerts_test-key-${serviceId}-${otherSecret}` })
      const failure = yield* Effect.flip(provider.send(email))
      expect(server.calls[0]!.claims).toBeUndefined()
      expect(failure).toBeInstanceOf(TemporaryDeliveryFailure)
      expect(failure.reason).toContain("Invalid token")
    }))

  it.scoped("429 with Retry-After is temporary and says when to try again", () =>
    Effect.gen(function*() {
      const server = yield* startNotifyServer(() => answers.rateLimited)
      const failure = yield* Effect.flip((yield* notify(server.baseUrl)).send(email))
      expect(failure).toBeInstanceOf(TemporaryDeliveryFailure)
      expect(failure).toMatchObject({ retryAfterMillis: 7000 })
      expect(failure.reason).toContain("Exceeded rate limit")
    }))

  it.scoped("500 is temporary", () =>
    Effect.gen(function*() {
      const server = yield* startNotifyServer(() => answers.serverError)
      const failure = yield* Effect.flip((yield* notify(server.baseUrl)).send(email))
      expect(failure).toBeInstanceOf(TemporaryDeliveryFailure)
      expect((failure as TemporaryDeliveryFailure).retryAfterMillis).toBeUndefined()
    }))

  it.scoped("400 about the email address is permanent", () =>
    Effect.gen(function*() {
      const server = yield* startNotifyServer(() => answers.badAddress)
      const failure = yield* Effect.flip((yield* notify(server.baseUrl)).send({ ...email, address: "not-an-address" }))
      expect(failure).toBeInstanceOf(PermanentDeliveryFailure)
      expect(failure.reason).toBe("Notify refused the address: ValidationError: email_address Not a valid email address")
      expect(failure).toMatchObject({ addressRejected: true })
    }))

  it.scoped("another 400 is permanent for the message and carries the provider's message", () =>
    Effect.gen(function*() {
      const server = yield* startNotifyServer(() => answers.missingPersonalisation)
      const failure = yield* Effect.flip((yield* notify(server.baseUrl)).send(email))
      expect(failure).toBeInstanceOf(PermanentDeliveryFailure)
      expect(failure.reason).toBe("Notify refused the message (400): BadRequestError: Missing personalisation: body")
      expect(failure).toMatchObject({ addressRejected: false })
    }))

  it.scopedLive("an API that never answers is a temporary failure within the timeout", () =>
    Effect.gen(function*() {
      const silent = yield* Effect.acquireRelease(
        Effect.promise(async () => {
          const server = Http.createServer(() => undefined)
          await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
          return server
        }),
        (server) => Effect.promise(() => new Promise<void>((resolve) => {
          server.closeAllConnections()
          server.close(() => resolve())
        }))
      )
      const { port } = silent.address() as Net.AddressInfo
      const provider = yield* notify(`http://127.0.0.1:${port}`, { timeout: "300 millis" })
      const started = Date.now()
      const failure = yield* Effect.flip(provider.send(email))
      expect(failure).toBeInstanceOf(TemporaryDeliveryFailure)
      expect(Date.now() - started).toBeLessThan(3_000)
    }))

  it.scoped("refuses a private address unless allowed", () =>
    Effect.gen(function*() {
      const server = yield* startNotifyServer()
      const failure = yield* Effect.flip((yield* notify(server.baseUrl, { allowPrivateAddresses: false })).send(email))
      expect(failure).toBeInstanceOf(TemporaryDeliveryFailure)
      expect(failure.reason).toContain("privateAddress")
      expect(server.calls).toHaveLength(0)
    }))
})

describe("parseNotifyApiKey", () => {
  it("takes the service id and secret from the end, so key names may hold hyphens", () => {
    const key = Either.getOrThrow(parseNotifyApiKey(apiKey))
    expect(key.keyName).toBe("alerts_test-key")
    expect(key.serviceId).toBe(serviceId)
    expect(Redacted.value(key.secretKey)).toBe(secretKey)
  })

  it("names the problem without repeating the key", () => {
    const problem = (key: string) => Either.getLeft(parseNotifyApiKey(key)).pipe((option) => option._tag === "Some" ? option.value : "")
    expect(problem("short")).toMatch(/expected \{key_name\}-\{service_id\}-\{secret_key\}/)
    expect(problem(`name-${serviceId}-${"z".repeat(36)}`)).toContain("secret key part is not a UUID")
    expect(problem(`name-${"z".repeat(36)}-${secretKey}`)).toContain("service id part is not a UUID")
    expect(problem(`-${serviceId}-${secretKey}`)).not.toBe("")
    expect(problem(`name-${"z".repeat(36)}-${secretKey}`)).not.toContain(secretKey)
  })
})

describe("retryAfterMillis", () => {
  it("reads seconds and HTTP dates", () => {
    const now = Date.parse("2026-11-25T08:30:00Z")
    expect(retryAfterMillis("120", now)).toBe(120_000)
    expect(retryAfterMillis("Wed, 25 Nov 2026 08:30:30 GMT", now)).toBe(30_000)
    expect(retryAfterMillis("Wed, 25 Nov 2026 08:29:00 GMT", now)).toBe(0)
    expect(retryAfterMillis("soon", now)).toBeUndefined()
    expect(retryAfterMillis(undefined, now)).toBeUndefined()
  })
})
