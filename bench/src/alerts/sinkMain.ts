/**
 * A GOV.UK Notify stand-in that accepts every email at once (201) and counts them, in a child process of its own so
 * that serving it shares no event loop with the bench's measurements. `GET /stats` answers what it has received since
 * the last `POST /reset`.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { announceReady } from "../sso/childServer"

const references = new Set<string>()
let requests = 0
let firstAt: number | null = null
let lastNewAt: number | null = null

const server = createServer((request, response) => {
  if (request.method === "GET" && request.url === "/stats") {
    response.writeHead(200, { "content-type": "application/json" })
    response.end(JSON.stringify({ requests, unique: references.size, firstAt, lastNewAt }))
    return
  }
  if (request.method === "POST" && request.url === "/reset") {
    references.clear()
    requests = 0
    firstAt = null
    lastNewAt = null
    response.writeHead(204).end()
    return
  }
  const chunks: Array<Buffer> = []
  request.on("data", (chunk: Buffer) => chunks.push(chunk))
  request.on("end", () => {
    const at = Date.now()
    requests += 1
    firstAt ??= at
    const reference = (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { reference?: unknown }).reference
    if (typeof reference === "string" && !references.has(reference)) {
      references.add(reference)
      lastNewAt = at
    }
    response.writeHead(201, { "content-type": "application/json" })
    response.end(`{"id":"${requests}"}`)
  })
})
server.keepAliveTimeout = 30_000
server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo
  announceReady({ url: `http://127.0.0.1:${port}` })
})
process.on("SIGTERM", () => server.close(() => process.exit(0)))
