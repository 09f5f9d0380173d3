import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

export interface LocalServer {
  readonly url: string
  readonly close: () => Promise<void>
}

/** A plain `node:http` server on 127.0.0.1 at a free port. */
export const listen = async (handler: (request: IncomingMessage, response: ServerResponse) => void): Promise<LocalServer> => {
  const server = createServer(handler)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve, reject) => {
        server.closeAllConnections()
        server.close((error) => (error ? reject(error) : resolve()))
      })
  }
}

/** `fetch` that counts the requests it makes for `/user.json`. */
export const countingFetch = () => {
  const counter = { userRequests: 0 }
  const counted: typeof fetch = (input, init) => {
    const url = input instanceof Request ? input.url : String(input)
    if (new URL(url).pathname.endsWith("/user.json")) counter.userRequests += 1
    return fetch(input, init)
  }
  return { fetch: counted, counter }
}
