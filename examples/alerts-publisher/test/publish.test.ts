import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ALERTS_TOKEN, alertsCallerBootstrap } from "../../../apps/server/test/alertsCaller"
import { type InProcessServer, startInProcessServer } from "../../../apps/server/test/inProcessServer"
import { publish } from "../src/publish"
import { type SmtpSink, startSmtpSink } from "../src/smtpSink"

let sink: SmtpSink
let caller: Awaited<ReturnType<typeof alertsCallerBootstrap>>
let server: InProcessServer

beforeAll(async () => {
  sink = await startSmtpSink()
  caller = await alertsCallerBootstrap()
  server = await startInProcessServer({
    CIVICSTACK_BOOTSTRAP: caller.file,
    SERVICES: "sso,alerts",
    EMAIL_PROVIDER: "smtp",
    SMTP_URL: `smtp://127.0.0.1:${sink.port}`,
    EMAIL_FROM: "alerts@example.org"
  })
})
afterAll(async () => {
  await server?.close()
  await caller?.remove()
  await sink?.close()
})

describe("the alerts publisher example against the reference server", () => {
  it("creates a list, subscribes two readers, and each gets the notification by SMTP with a one-click unsubscribe", async () => {
    const addresses = ["reader.one@example.org", "reader.two@example.org"]
    const published = await publish({ alertsUrl: server.url, bearerToken: ALERTS_TOKEN, addresses })
    expect(published.subscriptionIds).toHaveLength(2)

    const arrived = await sink.waitFor(2, 20_000)
    expect(arrived.map((email) => email.to[0]).sort()).toEqual(addresses)
    for (const email of arrived) {
      expect(email.subject).toBe(published.subject)
      expect(email.from).toBe("alerts@example.org")
      expect(email.text).toContain("Read the guidance (https://www.example.org/vat-rates)")
      expect(email.html).toContain(`<a href="https://www.example.org/vat-rates">Read the guidance</a>`)
      const subscriptionId = published.subscriptionIds[addresses.indexOf(email.to[0]!)]
      expect(email.listUnsubscribe).toBe(`<http://localhost:3000/email/unsubscribe/${subscriptionId}>`)
    }

    const second = await publish({ alertsUrl: server.url, bearerToken: ALERTS_TOKEN, addresses })
    expect(second.listSlug).toBe(published.listSlug)
  })
})
