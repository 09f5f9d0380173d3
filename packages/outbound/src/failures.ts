import { Schema } from "effect"
import { REFUSED_ADDRESS_CODE } from "./lookup"

export const OutboundFailureReason = Schema.Literal(
  "invalidUrl",
  "privateAddress",
  "dnsFailure",
  "refused",
  "reset",
  "unreachable",
  "connectTimeout",
  "responseTimeout",
  "certificate",
  "bodyTooLarge",
  "other"
)
export type OutboundFailureReason = typeof OutboundFailureReason.Type

/** Reasons no later attempt can change: the destination is refused or cannot be used. */
const permanentReasons: ReadonlySet<OutboundFailureReason> = new Set(["invalidUrl", "privateAddress"])

/** An outbound request that got no usable answer: why, whether trying again could help, and the detail for logs. */
export class OutboundFailure extends Schema.TaggedError<OutboundFailure>()("OutboundFailure", {
  reason: OutboundFailureReason,
  detail: Schema.String
}) {
  get permanent(): boolean {
    return permanentReasons.has(this.reason)
  }

  override get message() {
    return this.detail
  }
}

const certificateCodes: ReadonlySet<string> = new Set([
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_DECRYPT_CERT_SIGNATURE",
  "UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY",
  "CERT_SIGNATURE_FAILURE",
  "CERT_NOT_YET_VALID",
  "CERT_HAS_EXPIRED",
  "ERROR_IN_CERT_NOT_BEFORE_FIELD",
  "ERROR_IN_CERT_NOT_AFTER_FIELD",
  "CERT_REVOKED",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
  "CERT_CHAIN_TOO_LONG",
  "INVALID_CA",
  "INVALID_PURPOSE",
  "PATH_LENGTH_EXCEEDED",
  "HOSTNAME_MISMATCH",
  "ERR_TLS_CERT_ALTNAME_INVALID"
])

// First match wins, so a specific cause found deep in an error beats a generic wrapper code.
const reasonsByCode: ReadonlyArray<readonly [OutboundFailureReason, (code: string) => boolean]> = [
  ["privateAddress", (code) => code === REFUSED_ADDRESS_CODE],
  ["certificate", (code) => certificateCodes.has(code)],
  ["dnsFailure", (code) => ["ENOTFOUND", "EAI_AGAIN", "EAI_FAIL", "EAI_NODATA", "EAI_NONAME", "ENODATA"].includes(code)],
  ["refused", (code) => code === "ECONNREFUSED"],
  ["reset", (code) => code === "ECONNRESET" || code === "EPIPE"],
  ["unreachable", (code) => ["EHOSTUNREACH", "ENETUNREACH", "EHOSTDOWN", "ENETDOWN"].includes(code)],
  ["connectTimeout", (code) => code === "UND_ERR_CONNECT_TIMEOUT" || code === "ETIMEDOUT"],
  ["responseTimeout", (code) => ["UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT", "UND_ERR_ABORTED"].includes(code)],
  ["bodyTooLarge", (code) => code === "UND_ERR_RES_EXCEEDED_MAX_SIZE"]
]

/** Every error code in an error, its causes and, for an AggregateError (one per address tried), its errors. */
const codesIn = (error: unknown, depth = 0): ReadonlyArray<string> => {
  if (typeof error !== "object" || error === null || depth > 5) return []
  const { code, cause, errors } = error as { code?: unknown; cause?: unknown; errors?: unknown }
  return [
    ...(typeof code === "string" ? [code] : []),
    ...codesIn(cause, depth + 1),
    ...(Array.isArray(errors) ? errors.flatMap((inner) => codesIn(inner, depth + 1)) : [])
  ]
}

/** Classifies what undici or a socket threw. */
export const toOutboundFailure = (error: unknown): OutboundFailure => {
  if (error instanceof OutboundFailure) return error
  const codes = codesIn(error)
  const reason = reasonsByCode.find(([, matches]) => codes.some(matches))?.[0] ?? "other"
  const detail = error instanceof Error ? `${error.name}: ${error.message} [${codes.join(", ")}]` : String(error)
  return new OutboundFailure({ reason, detail })
}
