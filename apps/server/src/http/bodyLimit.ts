import * as Http from "node:http"

/** The largest request body accepted: a batch of 5000 long uris fits with room to spare. */
export const MAX_BODY_BYTES = 5 * 1024 * 1024

/**
 * A request whose body stops at `MAX_BODY_BYTES` whatever the client sends, chunked or not: past the limit the
 * readers see the body end, the rest is discarded as it arrives (nothing buffers it), and the connection stays open,
 * so a client still sending finishes and reads the 413.
 */
export class LimitedIncomingMessage extends Http.IncomingMessage {
  bodyBytes = 0
  bodyTooLarge = false

  override push(chunk: unknown, encoding?: BufferEncoding): boolean {
    if (this.bodyTooLarge) return true
    if (chunk instanceof Uint8Array) {
      this.bodyBytes += chunk.length
      if (this.bodyBytes > MAX_BODY_BYTES) {
        this.bodyTooLarge = true
        super.push(null)
        return true
      }
    }
    return super.push(chunk, encoding)
  }

  /** Node would cut the connection of a request destroyed before its body ended: not one refused for its size. */
  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (this.bodyTooLarge) return callback(error)
    super._destroy(error, callback)
  }
}

export const isBodyTooLarge = (request: Http.IncomingMessage) =>
  request instanceof LimitedIncomingMessage && request.bodyTooLarge
