/** The machine's ceiling: a bare node:http server answering every request with the same small JSON body. */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { announceReady } from "./childServer"

const body = JSON.stringify({ user: { uid: "00000000-0000-0000-0000-000000000000", name: "Ceiling", permissions: ["signin"] } })

const server = createServer((_request, response) => {
  response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
  response.end(body)
})
server.listen(0, "127.0.0.1", () => {
  announceReady({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })
})
process.once("SIGTERM", () => server.close(() => process.exit(0)))
