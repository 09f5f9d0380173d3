import { parseWebhook, SIGNATURE_HEADER_LOWERCASE, verifyWebhookSignature } from "@civicstack/sdk-linkcheck"
import type { BatchReport } from "@civicstack/sdk-linkcheck"
import { Either } from "effect"
import { createServer } from "node:http"
import type { IncomingMessage, ServerResponse } from "node:http"

/** Well above the report of a full batch of 5000 links; a larger body is refused before it is all read. */
const MAX_BODY_BYTES = 16 * 1024 * 1024

class BodyTooLarge extends Error {}

/** The body exactly as received: the signature covers these bytes, not JSON parsed and serialised again. */
const readRawBody = async (request: IncomingMessage): Promise<Buffer> => {
  if (Number(request.headers["content-length"] ?? 0) > MAX_BODY_BYTES) throw new BodyTooLarge()
  const chunks: Array<Buffer> = []
  let size = 0
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > MAX_BODY_BYTES) throw new BodyTooLarge()
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}

const receive = async (
  request: IncomingMessage,
  response: ServerResponse,
  secretToken: string,
  onReport: (report: BatchReport) => void
): Promise<void> => {
  if (request.method !== "POST") {
    response.writeHead(405, { allow: "POST" }).end()
    return
  }
  const rawBody = await readRawBody(request)

  const signature = request.headers[SIGNATURE_HEADER_LOWERCASE]
  if (!verifyWebhookSignature(rawBody, typeof signature === "string" ? signature : undefined, secretToken)) {
    response.writeHead(401).end()
    return
  }

  const report = parseWebhook(rawBody)
  if (Either.isLeft(report)) {
    response.writeHead(400, { "content-type": "text/plain; charset=utf-8" }).end(report.left.message)
    return
  }
  onReport(report.right)
  response.writeHead(204).end()
}

/**
 * An HTTP server that accepts the batch-complete webhook: 204 for a correctly signed BatchReport (after `onReport`),
 * 401 for a missing or wrong signature, 400 for a body that is not a BatchReport, 405 for other methods.
 */
export const createWebhookReceiver = (secretToken: string, onReport: (report: BatchReport) => void) =>
  createServer((request, response) => {
    receive(request, response, secretToken, onReport).catch((error: unknown) => {
      if (error instanceof BodyTooLarge) response.writeHead(413, { connection: "close" }).end()
      else response.destroy()
    })
  })
