import { Duration, Effect, Schema } from "effect"
import type { Scope } from "effect"
import type { LookupFunction } from "node:net"
import { Agent, request } from "undici"
import type { Dispatcher } from "undici"

export const TransportFailureReason = Schema.Literal(
  "dnsFailure",
  "refused",
  "reset",
  "unreachable",
  "connectTimeout",
  "responseTimeout",
  "certificate",
  "privateAddress",
  "other"
)
export type TransportFailureReason = typeof TransportFailureReason.Type

/** A request that got no response: why, and the underlying error for the logs. */
export class TransportFailure extends Schema.TaggedError<TransportFailure>()("TransportFailure", {
  reason: TransportFailureReason,
  detail: Schema.String
}) {}

export interface TransportSettings {
  readonly userAgent: string
  readonly connectTimeout: Duration.DurationInput
  readonly responseTimeout: Duration.DurationInput
  readonly perHostConnections: number
  readonly lookup: LookupFunction
}

export interface Response {
  readonly status: number
  readonly header: (name: string) => string | undefined
  readonly setCookies: ReadonlyArray<string>
  /**
   * Reads the HTML head as Latin-1 text: the body up to `</head`, at most `limit` bytes (less if it fails or stalls).
   * A body cut off at the limit, or by a failure or a stall, is dropped with its connection.
   */
  readonly readHead: (limit: number) => Effect.Effect<string>
}

export interface Transport {
  /** A GET whose response is handed to `use`; its body is released when `use` ends, unread beyond what it asked for. */
  readonly get: <A>(
    url: URL,
    options: { readonly cookie: string | undefined; readonly verifyCertificate: boolean },
    use: (response: Response) => Effect.Effect<A>
  ) => Effect.Effect<A, TransportFailure>
}

type Body = Dispatcher.ResponseData["body"]

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
const reasonsByCode: ReadonlyArray<readonly [TransportFailureReason, (code: string) => boolean]> = [
  ["privateAddress", (code) => code === "ELINKCHECK_PRIVATE_ADDRESS"],
  ["certificate", (code) => certificateCodes.has(code)],
  ["dnsFailure", (code) => ["ENOTFOUND", "EAI_AGAIN", "EAI_FAIL", "EAI_NODATA", "EAI_NONAME", "ENODATA"].includes(code)],
  ["refused", (code) => code === "ECONNREFUSED"],
  ["reset", (code) => code === "ECONNRESET" || code === "EPIPE"],
  ["unreachable", (code) => ["EHOSTUNREACH", "ENETUNREACH", "EHOSTDOWN", "ENETDOWN"].includes(code)],
  ["connectTimeout", (code) => code === "UND_ERR_CONNECT_TIMEOUT" || code === "ETIMEDOUT"],
  ["responseTimeout", (code) => code === "UND_ERR_HEADERS_TIMEOUT"]
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

export const toTransportFailure = (error: unknown): TransportFailure => {
  const codes = codesIn(error)
  const reason = reasonsByCode.find(([, matches]) => codes.some(matches))?.[0] ?? "other"
  const detail = error instanceof Error ? `${error.name}: ${error.message} [${codes.join(", ")}]` : String(error)
  return new TransportFailure({ reason, detail })
}

const bytesKeptForConnectionReuse = 64 * 1024

const ignore = () => undefined

/** Lets a small unread body finish so its connection can be reused; a big one is cut off with its connection. */
const release = (body: Body): void => {
  if (body.destroyed || body.readableEnded) return
  body.dump({ limit: bytesKeptForConnectionReuse }).catch(ignore)
}

/** Where the head of an HTML page ends, in either common spelling, from `from` on; -1 when not there. */
const endOfHead = (bytes: Buffer, from: number): number => {
  const lower = bytes.indexOf("</head", from)
  return lower !== -1 ? lower : bytes.indexOf("</HEAD", from)
}

/**
 * Reads the body until the page's head has ended, `limit` bytes have come, the body ended, or it stalled for
 * `timeout`. The head's text comes back as Latin-1, which maps each byte to one character without decoding: enough
 * for the ASCII markup searched for. When the head ended early the rest of the body is left unread for `release`,
 * which lets a small one finish so its connection is reused; in every other case the body is destroyed. A plain
 * timer rather than `Effect.timeout`, which would start two more fibers for every page read.
 */
const readHeadOf = (body: Body, limit: number, timeout: Duration.DurationInput): Effect.Effect<string> =>
  Effect.async<string>((resume) => {
    if (body.destroyed || body.readableEnded) return resume(Effect.succeed(""))
    let received: Buffer = Buffer.alloc(0)
    const detach = () => {
      clearTimeout(timer)
      body.off("data", onData).off("end", onEnd).off("error", onError)
    }
    const stop = (length: number, keepBody: boolean) => {
      detach()
      if (keepBody) body.pause()
      else body.destroy()
      resume(Effect.succeed(received.toString("latin1", 0, Math.min(length, received.length))))
    }
    const onData = (chunk: Buffer) => {
      const searchFrom = Math.max(0, received.length - "</head".length + 1)
      received = received.length === 0 ? chunk : Buffer.concat([received, chunk])
      const headEnd = endOfHead(received, searchFrom)
      if (headEnd !== -1 && headEnd <= limit) stop(headEnd, true)
      else if (received.length >= limit) stop(limit, false)
    }
    const onEnd = () => stop(received.length, true)
    // what arrived before a failure or a stall is still worth searching
    const onError = () => stop(limit, false)
    const timer = setTimeout(() => stop(limit, false), Duration.toMillis(timeout))
    body.on("data", onData).once("end", onEnd).once("error", onError)
    return Effect.sync(() => {
      detach()
      body.destroy()
    })
  })

const single = (value: string | ReadonlyArray<string> | undefined): string | undefined =>
  typeof value === "string" ? value : value?.[0]

const toResponse = (data: Dispatcher.ResponseData, readTimeout: Duration.DurationInput): Response => {
  const setCookie = data.headers["set-cookie"]
  return {
    status: data.statusCode,
    header: (name) => single(data.headers[name.toLowerCase()]),
    setCookies: setCookie === undefined ? [] : typeof setCookie === "string" ? [setCookie] : setCookie,
    readHead: (limit) => readHeadOf(data.body, limit, readTimeout)
  }
}

export const makeTransport = (settings: TransportSettings): Effect.Effect<Transport, never, Scope.Scope> =>
  Effect.gen(function*() {
    const responseTimeoutMillis = Duration.toMillis(settings.responseTimeout)
    const makeAgent = (verifyCertificate: boolean) =>
      Effect.acquireRelease(
        Effect.sync(() =>
          new Agent({
            connections: settings.perHostConnections,
            headersTimeout: responseTimeoutMillis,
            bodyTimeout: responseTimeoutMillis,
            connect: {
              timeout: Duration.toMillis(settings.connectTimeout),
              lookup: settings.lookup,
              rejectUnauthorized: verifyCertificate
            }
          })
        ),
        (agent) => Effect.promise(() => agent.destroy())
      )
    const verifying = yield* makeAgent(true)
    // Only used again after a certificate failure, to see what the page would show past the browser's warning.
    const notVerifying = yield* makeAgent(false)

    // acquireUseRelease rather than a scope: a scope's finaliser copies the fiber's context, a cost paid per request.
    const get: Transport["get"] = (url, { cookie, verifyCertificate }, use) =>
      Effect.acquireUseRelease(
        Effect.tryPromise({
          try: (signal) =>
            request(url, {
              dispatcher: verifyCertificate ? verifying : notVerifying,
              method: "GET",
              headers: {
                "user-agent": settings.userAgent,
                accept: "text/html,*/*",
                ...(cookie === undefined ? {} : { cookie })
              },
              maxRedirections: 0,
              signal
            }).then((data) => {
              // a body dropped or failing later reports an error event, which needs a listener not to crash
              data.body.on("error", ignore)
              return data
            }),
          catch: toTransportFailure
        }).pipe(Effect.interruptible),
        (data) => use(toResponse(data, settings.responseTimeout)),
        (data) => Effect.sync(() => release(data.body))
      )

    return { get }
  })
