import { Duration, Effect, Runtime, type Scope } from "effect"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { BenchError } from "../benchError"
import type { FleetStats } from "./fleetProtocol"
import { hostAddress, linkPath, type PlannedLink, redirectTargetPath } from "./linkPlan"

/** What one path of one fleet host answers, after `latencyMs`. */
interface Route {
  /** Position among all routes, for counting each one's requests. */
  readonly index: number
  readonly latencyMs: number
  readonly status: 200 | 301 | 404
  readonly location?: string
  readonly bodyBytes: number
}

/** HTTP keep-alive is on by default; idle connections stay open this long, as on common web servers. */
const KEEP_ALIVE_TIMEOUT_MS = 30_000

/** Per host, its routes by path. */
const routesOf = (links: ReadonlyArray<PlannedLink>, hosts: number) => {
  const routes = Array.from({ length: hosts }, () => new Map<string, Route>())
  let index = 0
  for (const link of links) {
    const [first = 0, second = 0] = link.hopLatenciesMs
    const { bodyBytes } = link
    const ofHost = routes[link.host]!
    if (link.kind === "redirect") {
      ofHost.set(linkPath(link.id), { index: index++, latencyMs: first, status: 301, location: redirectTargetPath(link.id), bodyBytes: 0 })
      ofHost.set(redirectTargetPath(link.id), { index: index++, latencyMs: second, status: 200, bodyBytes })
    } else {
      ofHost.set(linkPath(link.id), { index: index++, latencyMs: first, status: link.kind === "notFound" ? 404 : 200, bodyBytes })
    }
  }
  return { routes, count: index }
}

const filler = Buffer.from(
  "<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore.</p>\n"
    .repeat(400)
)

const htmlBody = (status: number, bodyBytes: number): Buffer => {
  const head = Buffer.from(
    `<!doctype html><html><head><meta charset="utf-8"><title>${status}</title></head><body><h1>${status}</h1>\n`
  )
  const tail = Buffer.from("</body></html>\n")
  const fill = Math.max(0, Math.min(filler.length, bodyBytes - head.length - tail.length))
  return Buffer.concat([head, filler.subarray(0, fill), tail])
}

const send = (response: ServerResponse, route: Route | undefined) => {
  if (response.destroyed) return
  const status = route?.status ?? 404
  const body = htmlBody(status, route?.bodyBytes ?? 0)
  response.writeHead(status, {
    "content-type": "text/html; charset=utf-8",
    "content-length": body.length,
    ...(route?.location === undefined ? {} : { location: route.location })
  })
  response.end(body)
}

const listen = (server: Server, host: string, port: number) =>
  Effect.async<number, BenchError>((resume) => {
    const onError = (cause: Error) => resume(Effect.fail(new BenchError({ message: `cannot listen on ${host}:${port}`, cause })))
    server.once("error", onError)
    server.listen({ host, port }, () => {
      server.off("error", onError)
      resume(Effect.succeed((server.address() as AddressInfo).port))
    })
  })

const close = (servers: ReadonlyArray<Server>) =>
  Effect.forEach(servers, (server) =>
    Effect.async<void>((resume) => {
      if (!server.listening) return resume(Effect.void)
      server.close(() => resume(Effect.void))
      server.closeAllConnections()
    }), { concurrency: "unbounded", discard: true })

/**
 * Listens with one server per host, all on one port: the first host takes a free port and the others the same,
 * trying again with a new port if one of them has it taken.
 */
const listenOnEveryHost = (hosts: number, makeServer: (host: number) => Server) => {
  const attempt = Effect.suspend(() => {
    const servers = Array.from({ length: hosts }, (_, host) => makeServer(host))
    return Effect.gen(function*() {
      const [first, ...others] = servers
      if (first === undefined) return { servers, port: 0 }
      const port = yield* listen(first, hostAddress(0), 0)
      yield* Effect.forEach(others, (server, index) => listen(server, hostAddress(index + 1), port), { discard: true })
      return { servers, port }
    }).pipe(Effect.tapError(() => close(servers)))
  })
  return Effect.acquireRelease(attempt.pipe(Effect.retry({ times: 10 })), ({ servers }) => close(servers))
}

export interface RunningFleet {
  readonly port: number
  readonly stats: () => FleetStats
  readonly reset: () => void
}

/**
 * Serves the planned links on `hosts` fleet hosts (from index 0) with their latencies, keep-alive on, and counts the
 * requests in progress per host and the requests of each route. Closed with the scope.
 */
export const serveFleet = (
  links: ReadonlyArray<PlannedLink>,
  hosts: number
): Effect.Effect<RunningFleet, BenchError, Scope.Scope> =>
  Effect.gen(function*() {
    const { count: routeCount, routes } = routesOf(links, hosts)
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    const inFlightByHost = new Int32Array(hosts)
    const peakByHost = new Int32Array(hosts)
    const requestsByHost = new Int32Array(hosts)
    const requestsByRoute = new Uint8Array(routeCount)
    let repeated = 0
    /** The integral of `inFlight` over time since the reset, in request-milliseconds, and when it was last added to. */
    let inFlightArea = 0
    let inFlightSince = performance.now()
    const accountInFlight = () => {
      const at = performance.now()
      inFlightArea += inFlight * (at - inFlightSince)
      inFlightSince = at
    }
    let inFlight = 0
    let peakInFlight = 0
    let firstRequestAt: number | null = null
    let lastResponseAt: number | null = null
    let requests = 0
    let headRequests = 0
    let unexpected = 0

    const handle = (host: number) => (request: IncomingMessage, response: ServerResponse) => {
      requests += 1
      requestsByHost[host] = (requestsByHost[host] ?? 0) + 1
      firstRequestAt ??= Date.now()
      if (request.method === "HEAD") headRequests += 1
      inFlightByHost[host] = (inFlightByHost[host] ?? 0) + 1
      peakByHost[host] = Math.max(peakByHost[host] ?? 0, inFlightByHost[host] ?? 0)
      accountInFlight()
      inFlight += 1
      peakInFlight = Math.max(peakInFlight, inFlight)
      response.once("close", () => {
        inFlightByHost[host] = (inFlightByHost[host] ?? 1) - 1
        accountInFlight()
        inFlight -= 1
        lastResponseAt = Date.now()
      })
      const route = routes[host]!.get(request.url ?? "")
      if (route === undefined) {
        unexpected += 1
        return send(response, undefined)
      }
      if (requestsByRoute[route.index] !== 0) repeated += 1
      else requestsByRoute[route.index] = 1
      runFork(Effect.delay(Effect.sync(() => send(response, route)), Duration.millis(route.latencyMs)))
    }

    const { port } = yield* listenOnEveryHost(hosts, (host) => {
      const server = createServer(handle(host))
      server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS
      return server
    })

    return {
      port,
      stats: () => {
        accountInFlight()
        return {
          requests,
          headRequests,
          unexpected,
          repeated,
          inFlight,
          inFlightArea,
          peakInFlight,
          firstRequestAt,
          lastResponseAt,
          peakPerHost: Array.from(peakByHost),
          requestsPerHost: Array.from(requestsByHost)
        }
      },
      reset: () => {
        requests = 0
        headRequests = 0
        unexpected = 0
        repeated = 0
        accountInFlight()
        inFlightArea = 0
        requestsByHost.fill(0)
        requestsByRoute.fill(0)
        peakByHost.set(inFlightByHost)
        peakInFlight = inFlight
        firstRequestAt = null
        lastResponseAt = null
      }
    }
  })
