import { BatchReport, SIGNATURE_HEADER } from "@civicstack/core-linkcheck/api"
import { Either, Schema } from "effect"
import { createHmac, timingSafeEqual } from "node:crypto"
import { InvalidWebhookBody } from "./errors"

/** The header that carries the webhook's signature when the batch was created with a secret token. */
export { SIGNATURE_HEADER }
/** The same header as Node's `IncomingMessage.headers` names it. */
export const SIGNATURE_HEADER_LOWERCASE = SIGNATURE_HEADER.toLowerCase()

const utf8 = new TextEncoder()

const bytesOf = (rawBody: string | Uint8Array): Uint8Array =>
  typeof rawBody === "string" ? utf8.encode(rawBody) : rawBody

/**
 * True when `signatureHeader` is the lowercase hex HMAC-SHA1 of the exact request body keyed with `secretToken`.
 * Pass the body as received, before any JSON parsing: re-serialised JSON does not keep the signed bytes. A missing,
 * malformed or wrong-length header is false; the comparison takes the same time wherever the digests differ.
 */
export const verifyWebhookSignature = (
  rawBody: string | Uint8Array,
  signatureHeader: string | null | undefined,
  secretToken: string
): boolean => {
  if (typeof signatureHeader !== "string") return false
  const expected = Buffer.from(createHmac("sha1", secretToken).update(bytesOf(rawBody)).digest("hex"), "utf8")
  const received = Buffer.from(signatureHeader, "utf8")
  return received.length === expected.length && timingSafeEqual(received, expected)
}

const decodeReport = Schema.decodeUnknownEither(Schema.parseJson(BatchReport))
const strictUtf8 = new TextDecoder("utf-8", { fatal: true })

const textOf = (rawBody: string | Uint8Array): Either.Either<string, InvalidWebhookBody> =>
  typeof rawBody === "string"
    ? Either.right(rawBody)
    : Either.try({
      try: () => strictUtf8.decode(rawBody),
      catch: () => new InvalidWebhookBody({ message: "The webhook body is not valid UTF-8" })
    })

/** Decodes a webhook body into the completed batch's report. Verify the signature first. */
export const parseWebhook = (rawBody: string | Uint8Array): Either.Either<BatchReport, InvalidWebhookBody> =>
  Either.flatMap(textOf(rawBody), (text) =>
    Either.mapLeft(
      decodeReport(text),
      (error) => new InvalidWebhookBody({ message: `The webhook body is not a BatchReport: ${error.message}` })
    ))
