import * as Http from "node:http"
import type * as Net from "node:net"

export interface ReceivedWebhook {
  readonly body: Buffer
  readonly headers: Http.IncomingHttpHeaders
}

/** A local webhook receiver that records each POST and answers with the statuses given, then 200. */
export const startWebhookReceiver = async (statuses: ReadonlyArray<number> = []) => {
  const received: Array<ReceivedWebhook> = []
  const waiting: Array<() => void> = []
  const server = Http.createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      received.push({ body: Buffer.concat(chunks), headers: request.headers })
      response.statusCode = statuses[received.length - 1] ?? 200
      response.end()
      waiting.splice(0).forEach((wake) => wake())
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as Net.AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hooks/linkcheck`,
    received,
    /** Resolves once `n` webhooks have arrived. */
    waitFor: (n: number) =>
      new Promise<void>((resolve) => {
        const check = () => (received.length >= n ? resolve() : waiting.push(check))
        check()
      }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
