import { Duration, Effect } from "effect"
import type { Scope } from "effect"
import { Agent, request } from "undici"
import { isIpAddress, isPublicAddress } from "./addresses"
import { OutboundFailure, toOutboundFailure } from "./failures"
import { guardedLookup } from "./lookup"
import type { Resolver } from "./lookup"

export interface GuardSettings {
  /** Let requests reach loopback, private and other non-public addresses (tests, intranets). */
  readonly allowPrivateAddresses: boolean
  /** Resolves host names instead of the system resolver (tests). */
  readonly resolve?: Resolver | undefined
}

export interface AgentSettings extends GuardSettings {
  readonly connectTimeout: Duration.DurationInput
  /** Until the response headers arrive, and between two pieces of its body. */
  readonly responseTimeout: Duration.DurationInput
  /** Connections kept open per origin. */
  readonly connectionsPerOrigin?: number | undefined
  /** False to accept any certificate (only to look past a broken one). */
  readonly verifyCertificates?: boolean | undefined
}

/** Refuses a URL that is not absolute http(s), or whose host is an IP address that is not public. */
export const checkDestination = (url: string | URL, guard: GuardSettings): Effect.Effect<URL, OutboundFailure> =>
  Effect.suspend(() => {
    const parsed = typeof url === "string" ? (URL.canParse(url) ? new URL(url) : undefined) : url
    if (parsed === undefined || (parsed.protocol !== "http:" && parsed.protocol !== "https:") || parsed.hostname === "") {
      return Effect.fail(new OutboundFailure({ reason: "invalidUrl", detail: `${String(url)} is not an absolute http(s) URL` }))
    }
    // sockets connect to an IP address without a lookup, so the guard looks at it here
    if (!guard.allowPrivateAddresses && isIpAddress(parsed.hostname) && !isPublicAddress(parsed.hostname)) {
      return Effect.fail(new OutboundFailure({ reason: "privateAddress", detail: `${parsed.hostname} is a non-public address` }))
    }
    return Effect.succeed(parsed)
  })

/** A pooled undici agent whose connections go only to public addresses (unless allowed); closed with its scope. */
export const makeAgent = (settings: AgentSettings): Effect.Effect<Agent, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const responseTimeout = Duration.toMillis(settings.responseTimeout)
      return new Agent({
        ...(settings.connectionsPerOrigin === undefined ? {} : { connections: settings.connectionsPerOrigin }),
        headersTimeout: responseTimeout,
        bodyTimeout: responseTimeout,
        connect: {
          timeout: Duration.toMillis(settings.connectTimeout),
          lookup: guardedLookup(settings),
          rejectUnauthorized: settings.verifyCertificates ?? true
        }
      })
    }),
    (agent) => Effect.promise(() => agent.destroy())
  )

export interface OutboundRequest {
  readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE"
  readonly headers?: Readonly<Record<string, string>> | undefined
  readonly body?: string | Uint8Array | undefined
  /** The most response body bytes read; a longer body fails with `bodyTooLarge`. */
  readonly maxResponseBytes?: number | undefined
  /** Only the status and headers matter: the body is thrown away unread (and its connection kept if it is short). */
  readonly ignoreBody?: boolean | undefined
}

export interface OutboundResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  readonly body: Uint8Array
}

export interface OutboundClientSettings extends AgentSettings {
  readonly userAgent: string
  /** The whole exchange, from connecting to the last byte of the answer. */
  readonly totalTimeout: Duration.DurationInput
  /** Default for `maxResponseBytes`: 1 MiB. */
  readonly maxResponseBytes?: number | undefined
}

export interface OutboundClient {
  readonly agent: Agent
  /** One request whose whole (bounded) answer comes back; redirects are not followed. */
  readonly request: (url: string | URL, request: OutboundRequest) => Effect.Effect<OutboundResponse, OutboundFailure>
}

const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024

/**
 * The client the cores use for outbound calls (webhooks, pushes, email provider APIs): the private-address guard,
 * a total timeout and a response size limit on every request, over one pooled agent.
 */
export const makeOutboundClient = (settings: OutboundClientSettings): Effect.Effect<OutboundClient, never, Scope.Scope> =>
  Effect.map(makeAgent(settings), (agent) => ({
    agent,
    request: (url, outbound) =>
      Effect.flatMap(checkDestination(url, settings), (destination) =>
        Effect.tryPromise({
          try: async (signal) => {
            const response = await request(destination, {
              method: outbound.method,
              headers: { ...outbound.headers, "user-agent": settings.userAgent },
              ...(outbound.body === undefined ? {} : { body: outbound.body }),
              dispatcher: agent,
              signal
            })
            if (outbound.ignoreBody === true) {
              await response.body.dump()
              return { status: response.statusCode, headers: response.headers, body: new Uint8Array() }
            }
            const limit = outbound.maxResponseBytes ?? settings.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES
            const chunks: Array<Uint8Array> = []
            let received = 0
            for await (const chunk of response.body) {
              received += (chunk as Uint8Array).length
              if (received > limit) {
                response.body.destroy()
                throw new OutboundFailure({ reason: "bodyTooLarge", detail: `the answer is larger than ${limit} bytes` })
              }
              chunks.push(chunk as Uint8Array)
            }
            return { status: response.statusCode, headers: response.headers, body: Buffer.concat(chunks) }
          },
          catch: toOutboundFailure
        }).pipe(
          Effect.timeoutFail({
            duration: settings.totalTimeout,
            onTimeout: () =>
              new OutboundFailure({
                reason: "responseTimeout",
                detail: `no complete answer within ${Duration.format(settings.totalTimeout)}`
              })
          }),
          Effect.tap((response) => Effect.annotateCurrentSpan("http.response.status_code", response.status)),
          // the host only: the path and query of a webhook or push URL may hold its secret
          Effect.withSpan(`${outbound.method} ${destination.host}`, {
            kind: "client",
            attributes: { "http.request.method": outbound.method, "server.address": destination.hostname }
          })
        ))
  }))
