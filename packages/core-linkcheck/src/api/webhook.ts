/** The header that carries a webhook body's signature: lowercase hex HMAC-SHA1 of the exact bytes. */
export const SIGNATURE_HEADER = "X-LinkCheckerApi-Signature"
