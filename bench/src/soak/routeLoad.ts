import autocannon from "autocannon"
import { type LoadRequest, sentAs } from "../sso/load"
import type { RouteMeter } from "./routeMeter"

/** One request of a route, made afresh for each request sent. */
export type SoakRequest = LoadRequest

/**
 * A family of routes under load: `next` makes each request; `answered` sees each answer with what `next` returned
 * for it (e.g. the rotated refresh token in the body).
 */
export interface RouteLoad<A = unknown> {
  readonly route: string
  readonly connections: number
  /** Requests a second, all connections together; as fast as the answers come when unset. */
  readonly rate?: number
  readonly next: () => { readonly request: SoakRequest; readonly tag: A }
  readonly answered?: (status: number, body: string, tag: A) => void
}

export interface RunningLoad {
  readonly stop: () => void
  /** Settles once autocannon has stopped (its duration is up, or `stop`); fails if it could not run. */
  readonly done: Promise<void>
}

interface RequestContext {
  tag?: unknown
}

/** Runs autocannon in this process for `seconds` with the route's requests, each answer and error counted in `meter`. */
export const startRouteLoad = <A>(url: string, load: RouteLoad<A>, seconds: number, meter: RouteMeter): RunningLoad => {
  const answered = load.answered
  let settle: (error: Error | null) => void = () => {}
  const done = new Promise<void>((resolve, reject) => {
    settle = (error) => (error === null ? resolve() : reject(error))
  })
  const instance = autocannon({
    url,
    connections: load.connections,
    duration: seconds,
    ...(load.rate === undefined ? {} : { overallRate: load.rate }),
    requests: [{
      // autocannon hands each request and its answer the same context object
      setupRequest: (request, context: RequestContext) => {
        const { request: chosen, tag } = load.next()
        context.tag = tag
        return sentAs(request, chosen)
      },
      ...(answered === undefined
        ? {}
        : { onResponse: (status: number, body: string, context: RequestContext) => answered(status, body, context.tag as A) })
    }]
  }, (error) => settle(error ?? null))
  instance.on("response", (_client, status, _bytes, latencyMs) => meter.answered(status, latencyMs))
  instance.on("reqError", () => meter.failed())
  return { stop: () => instance.stop(), done }
}
