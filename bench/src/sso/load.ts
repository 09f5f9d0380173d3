import autocannon from "autocannon"
import { type CpuMeter, cpuSince, type CpuUse, readCpu } from "./cpu"

export interface LoadRequest {
  readonly method: "GET" | "POST"
  readonly path: string
  readonly headers: Record<string, string>
  readonly body?: string
}

/** The request autocannon is about to send, made into `chosen`. */
export const sentAs = <R extends object>(request: R, chosen: LoadRequest) => ({
  ...request,
  method: chosen.method,
  path: chosen.path,
  headers: chosen.headers,
  ...(chosen.body === undefined ? {} : { body: chosen.body })
})

export interface LoadResult {
  readonly requests: number
  readonly seconds: number
  readonly requestsPerSecond: number
  readonly p99Ms: number
  readonly errors: number
  readonly non2xx: number
  /** True when a pool of single-use requests ran out before the time was up. */
  readonly poolExhausted: boolean
  /** Entries of `requests` taken, in order from the first. */
  readonly sent: number
  /** CPU used during the measured run, when it was metered. */
  readonly cpu?: CpuUse
}

export interface LoadOptions {
  readonly url: string
  readonly connections: number
  readonly seconds: number
  /**
   * Called once per request sent, in turn; the requests are used once each (`single-use`, a request per pool
   * entry and the run ends when they are all sent) or in rotation (`rotate`).
   */
  readonly requests: ReadonlyArray<LoadRequest>
  readonly use: "rotate" | "single-use"
  /** At most this many requests; all of them when unset. */
  readonly limit?: number
}

/** Runs autocannon against `url` in this process and reduces its result to what the report shows. */
export const runLoad = async (options: LoadOptions): Promise<LoadResult> => {
  let next = 0
  let settle: (outcome: { error: Error | null; result: autocannon.Result }) => void = () => {}
  const finished = new Promise<{ error: Error | null; result: autocannon.Result }>((resolve) => { settle = resolve })
  const instance = autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.seconds,
    ...(options.use === "single-use" ? { amount: Math.min(options.requests.length, options.limit ?? Infinity) } : {}),
    requests: [{
      setupRequest: (request) => {
        const chosen = options.requests[next % options.requests.length]!
        next += 1
        return sentAs(request, chosen)
      }
    }]
  }, (error, result) => settle({ error, result }))
  // `amount` overrides `duration` in autocannon; the time limit still applies.
  const deadline = options.use === "single-use" ? setTimeout(() => instance.stop(), options.seconds * 1000) : undefined
  // autocannon ends a run at its next one-second sample after the last answer, so a run that used up its pool would
  // count up to a second it did not work; such a run is timed to its last answer instead
  const startedAt = performance.now()
  let lastAnswerAt = startedAt
  instance.on("response", () => {
    lastAnswerAt = performance.now()
  })
  const { error, result } = await finished
  clearTimeout(deadline)
  if (error !== null) throw error
  const requests = result.requests.total
  const poolExhausted = options.use === "single-use" && next >= options.requests.length
  const seconds = poolExhausted ? Math.max(0.01, (lastAnswerAt - startedAt) / 1000) : result.duration
  return {
    requests,
    seconds,
    requestsPerSecond: requests / seconds,
    p99Ms: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    poolExhausted,
    sent: next
  }
}

/**
 * A warm-up of `warmupSeconds` (the servers' JIT and caches), whose figures are dropped, then the measured run. Single-use
 * requests taken by the warm-up are gone: it may take a fifth of the pool at most, and the measurement has the rest.
 */
export const warmUpThenRunLoad = async (
  options: LoadOptions,
  warmupSeconds: number,
  meter?: CpuMeter
): Promise<LoadResult> => {
  const measured = async (measuredOptions: LoadOptions) => {
    const before = meter === undefined ? undefined : readCpu(meter)
    const result = await runLoad(measuredOptions)
    return meter === undefined || before === undefined ? result : { ...result, cpu: cpuSince(meter, before) }
  }
  if (warmupSeconds === 0) return measured(options)
  const warmup = await runLoad({
    ...options,
    seconds: warmupSeconds,
    ...(options.use === "single-use" ? { limit: Math.floor(options.requests.length / 5) } : {})
  })
  return measured(options.use === "single-use" ? { ...options, requests: options.requests.slice(warmup.sent) } : options)
}
