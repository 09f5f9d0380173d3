import { percentileOfSorted } from "../percentile"

/** What one route answered over a stretch of the run. */
export interface RouteFigures {
  readonly requests: number
  readonly p50Ms: number | null
  readonly p99Ms: number | null
  readonly status5xx: number
  /** Answers neither 2xx nor 5xx (a 4xx means the bench sent something wrong). */
  readonly statusOther: number
  /** Timeouts and connection errors, which have no status. */
  readonly errors: number
}

const figuresOf = (latencies: ReadonlyArray<number>, status5xx: number, statusOther: number, errors: number): RouteFigures => {
  const sorted = Float64Array.from(latencies).sort()
  return {
    requests: latencies.length,
    p50Ms: percentileOfSorted(sorted, 50),
    p99Ms: percentileOfSorted(sorted, 99),
    status5xx,
    statusOther,
    errors
  }
}

/** Counts one route's answers and their latencies, for the current window and for the whole run. */
export class RouteMeter {
  private window: Array<number> = []
  private window5xx = 0
  private windowOther = 0
  private windowErrors = 0
  private readonly all: Array<number> = []
  private total5xx = 0
  private totalOther = 0
  private totalErrors = 0
  /** Each status other than 2xx seen, with its count. */
  readonly unexpectedStatuses = new Map<number, number>()

  constructor(readonly route: string) {}

  answered(status: number, latencyMs: number) {
    this.window.push(latencyMs)
    this.all.push(latencyMs)
    if (status >= 200 && status < 300) return
    this.unexpectedStatuses.set(status, (this.unexpectedStatuses.get(status) ?? 0) + 1)
    if (status >= 500) {
      this.window5xx += 1
      this.total5xx += 1
    } else {
      this.windowOther += 1
      this.totalOther += 1
    }
  }

  failed() {
    this.windowErrors += 1
    this.totalErrors += 1
  }

  /** The figures since the last call, and a new window from now. */
  takeWindow(): RouteFigures {
    const figures = figuresOf(this.window, this.window5xx, this.windowOther, this.windowErrors)
    this.window = []
    this.window5xx = 0
    this.windowOther = 0
    this.windowErrors = 0
    return figures
  }

  total(): RouteFigures {
    return figuresOf(this.all, this.total5xx, this.totalOther, this.totalErrors)
  }
}
