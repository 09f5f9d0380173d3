import { publish } from "./publish"
import { startSmtpSink } from "./smtpSink"

const alertsUrl = process.env.ALERTS_URL ?? "http://localhost:3000"
const bearerToken = process.env.ALERTS_TOKEN
const port = Number(process.env.SMTP_PORT ?? 2525)
const addresses = ["reader.one@example.org", "reader.two@example.org"]

if (bearerToken === undefined || bearerToken === "") {
  console.error("Set ALERTS_TOKEN to an SSO API token with signin on email-alert-api (see the README).")
  process.exit(1)
}

const sink = await startSmtpSink({ port })
console.log(`SMTP sink listening on 127.0.0.1:${sink.port}`)
try {
  const { subject } = await publish({ alertsUrl, bearerToken, addresses })
  const arrived = await sink.waitFor(addresses.length, 60_000)
  for (const email of arrived.filter((each) => each.subject === subject)) {
    console.log(`\nTo ${email.to.join(", ")}: ${email.subject}\nList-Unsubscribe: ${email.listUnsubscribe ?? "(none)"}\n${email.text}`)
  }
} finally {
  await sink.close()
}
