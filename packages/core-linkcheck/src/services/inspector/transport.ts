import { makeAgent as makeGuardedAgent, toOutboundFailure } from "@civicstack/outbound"
import type { OutboundFailure, Resolver } from "@civicstack/outbound"
import { Duration, Effect } from "effect"
import type { Scope } from "effect"
import { request } from "undici"
import type { Dispatcher } from "undici"

export interface TransportSettings {
  readonly userAgent: string
  readonly connectTimeout: Duration.DurationInput
  readonly responseTimeout: Duration.DurationInput
  readonly perHostConnections: number
  readonly allowPrivateAddresses: boolean
  readonly resolve?: Resolver | undefined
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
  ) => Effect.Effect<A, OutboundFailure>
}

type Body = Dispatcher.ResponseData["body"]

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
    const makeAgent = (verifyCertificate: boolean) =>
      makeGuardedAgent({
        allowPrivateAddresses: settings.allowPrivateAddresses,
        resolve: settings.resolve,
        connectTimeout: settings.connectTimeout,
        responseTimeout: settings.responseTimeout,
        connectionsPerOrigin: settings.perHostConnections,
        verifyCertificates: verifyCertificate
      })
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
          catch: toOutboundFailure
        }).pipe(Effect.interruptible),
        (data) => use(toResponse(data, settings.responseTimeout)),
        (data) => Effect.sync(() => release(data.body))
      )

    return { get }
  })
