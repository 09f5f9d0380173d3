import { BatchReport, SIGNATURE_HEADER } from "@civicstack/sdk-linkcheck"
import { Either, Schema } from "effect"
import { createHmac, randomBytes } from "node:crypto"
import type { Server } from "node:http"
import type { AddressInfo } from "node:net"
import { createWebhookReceiver } from "./receiver"

const printReport = (report: BatchReport) => {
  const { totals } = report
  console.log(
    `Received batch ${report.id}, completed at ${report.completed_at?.toISOString()}: ` +
      `${totals.links} links, ${totals.ok} ok, ${totals.caution} caution, ${totals.broken} broken`
  )
  for (const link of report.links) {
    console.log(`  ${link.status.padEnd(7)} ${link.uri}${link.problem_summary === null ? "" : `  ${link.problem_summary}`}`)
  }
}

const listen = (server: Server, port: number, host: string) =>
  new Promise<number>((resolve, reject) => {
    server.once("error", reject)
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port))
  })

/** What the link checker sends: the lowercase hex HMAC-SHA1 of the exact body, keyed with the batch's secret token. */
const sign = (body: string, secretToken: string) => createHmac("sha1", secretToken).update(body).digest("hex")

/** A completed batch as the service sends it. */
const sampleReport: typeof BatchReport.Encoded = {
  id: 1,
  status: "completed",
  links: [
    {
      uri: "https://www.example.org/guidance",
      status: "ok",
      checked: "2026-01-15T09:30:00Z",
      problem_summary: null,
      errors: [],
      warnings: [],
      danger: [],
      suggested_fix: null
    },
    {
      uri: "https://www.example.org/missing-page",
      status: "broken",
      checked: "2026-01-15T09:30:01Z",
      problem_summary: "Page not found",
      errors: ["The page could not be found (error 404)."],
      warnings: [],
      danger: [],
      suggested_fix: "Find out where the content has moved and link there, or remove the link."
    }
  ],
  totals: { links: 2, ok: 1, caution: 0, broken: 1, pending: 0, danger: 0 },
  completed_at: "2026-01-15T09:30:01Z"
}

/** Starts the receiver on a free local port, sends it one correctly signed and one forged webhook, and stops. */
const demonstrate = async () => {
  // In real use this is the webhook_secret_token given when the batch was created; here both ends are this program.
  const secretToken = randomBytes(32).toString("hex")
  const receiver = createWebhookReceiver(secretToken, printReport)
  const url = `http://127.0.0.1:${await listen(receiver, 0, "127.0.0.1")}/`
  console.log(`Receiver listening on ${url}`)

  const body = JSON.stringify(sampleReport)
  const send = async (signature: string) => {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", [SIGNATURE_HEADER]: signature },
      body
    })
    return response.status
  }
  const signed = await send(sign(body, secretToken))
  console.log(`Correctly signed webhook: answered ${signed}`)
  const forged = await send(sign(body, "a guessed secret"))
  console.log(`Forged webhook: answered ${forged}`)

  receiver.closeAllConnections()
  receiver.close()
  if (signed !== 204 || forged !== 401) {
    console.error("Expected 204 for the signed webhook and 401 for the forged one")
    process.exitCode = 1
  }
}

/** 0 lets the system pick a free port. */
const Port = Schema.NumberFromString.pipe(Schema.int(), Schema.between(0, 65535))

/** Waits for real webhooks until stopped; the secret and address come from the environment. */
const listenForWebhooks = async () => {
  const secretToken = process.env.LINKCHECK_WEBHOOK_SECRET ?? ""
  const port = Schema.decodeUnknownEither(Port)(process.env.PORT ?? "8080")
  if (secretToken === "" || Either.isLeft(port)) {
    console.error("Set LINKCHECK_WEBHOOK_SECRET to the batches' webhook_secret_token, and PORT (default 8080) to a port number")
    process.exitCode = 1
    return
  }
  const host = process.env.HOST ?? "127.0.0.1"
  const receiver = createWebhookReceiver(secretToken, printReport)
  const boundPort = await listen(receiver, port.right, host)
  console.log(`Waiting for webhooks on http://${host}:${boundPort}/ (Ctrl+C to stop)`)
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      receiver.closeAllConnections()
      receiver.close()
    })
  }
}

await (process.argv.includes("--listen") ? listenForWebhooks() : demonstrate())
