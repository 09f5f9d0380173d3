import { createHmac } from "node:crypto"

export { SIGNATURE_HEADER } from "../api/webhook"

/** Lowercase hex HMAC-SHA1 of the exact body bytes, keyed with the batch's secret token. */
export const signWebhookBody = (body: string, secretToken: string): string =>
  createHmac("sha1", secretToken).update(body, "utf8").digest("hex")
