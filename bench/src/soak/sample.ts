import type { RouteFigures } from "./routeMeter"

/** One window of the run: each route's figures over it, and the server's state at its end. */
export interface Sample {
  readonly elapsedSeconds: number
  readonly routes: ReadonlyArray<RouteFigures & { readonly route: string }>
  /** 5xx answers since the start of the run. */
  readonly total5xx: number
  readonly rssBytes: number | null
  /** The readiness answer's backlog figures: alert emails pending plus queued jobs, link checks pending. */
  readonly alertsQueue: number | null
  readonly pendingChecks: number | null
  /** How long the oldest runnable job of the server's job queues (e.g. a notification's fan-out) has waited. */
  readonly oldestJobSeconds: number | null
}

const fixed = (value: number | null, digits = 0) => (value === null ? "-" : value.toFixed(digits))
export const megabytes = (bytes: number | null) => (bytes === null ? "-" : (bytes / 1024 / 1024).toFixed(0))

const sumOf = (sample: Sample, figure: "status5xx" | "statusOther" | "errors") =>
  sample.routes.reduce((sum, route) => sum + route[figure], 0)

/** One line of progress, printed as each window ends. */
export const sampleLine = (label: string, sample: Sample) =>
  [
    `${label} ${String(Math.round(sample.elapsedSeconds)).padStart(4)} s`,
    ...sample.routes.map((route) => `${route.route} ${route.requests} ${fixed(route.p50Ms)}/${fixed(route.p99Ms)} ms`),
    `5xx ${sumOf(sample, "status5xx")} (total ${sample.total5xx})`,
    `other non-2xx ${sumOf(sample, "statusOther")}`,
    `errors ${sumOf(sample, "errors")}`,
    `RSS ${megabytes(sample.rssBytes)} MB`,
    `alerts queue ${sample.alertsQueue ?? "-"}`,
    `pending checks ${sample.pendingChecks ?? "-"}`,
    `oldest job ${fixed(sample.oldestJobSeconds, 1)} s`
  ].join(" | ")

const row = (cells: ReadonlyArray<string>) => `| ${cells.join(" | ")} |`

/** The windows as a markdown table: per route, requests answered and p50 / p99 ms in the window. */
export const samplesTable = (samples: ReadonlyArray<Sample>): string => {
  const routes = samples[0]?.routes.map((route) => route.route) ?? []
  return [
    row(["s", ...routes, "5xx (window / total)", "other non-2xx", "errors", "RSS MB", "alerts queue", "pending checks", "oldest job s"]),
    row(["---:", ...routes.map(() => "---:"), "---:", "---:", "---:", "---:", "---:", "---:", "---:"]),
    ...samples.map((sample) =>
      row([
        String(Math.round(sample.elapsedSeconds)),
        ...sample.routes.map((route) => `${route.requests} · ${fixed(route.p50Ms)} / ${fixed(route.p99Ms)}`),
        `${sumOf(sample, "status5xx")} / ${sample.total5xx}`,
        String(sumOf(sample, "statusOther")),
        String(sumOf(sample, "errors")),
        megabytes(sample.rssBytes),
        String(sample.alertsQueue ?? "-"),
        String(sample.pendingChecks ?? "-"),
        fixed(sample.oldestJobSeconds, 1)
      ])
    )
  ].join("\n")
}

export interface RssVerdict {
  readonly atSettleBytes: number
  readonly maxAfterBytes: number
  readonly lastBytes: number
  /** Highest RSS after the settling time over the RSS at it, minus 1. */
  readonly growth: number
  readonly flat: boolean
}

/** Whether RSS stayed within `tolerance` of its value at `settleSeconds`; null without readings at and after it. */
export const rssVerdict = (samples: ReadonlyArray<Sample>, settleSeconds: number, tolerance: number): RssVerdict | null => {
  const settled = samples.find((sample) => sample.elapsedSeconds >= settleSeconds - 0.5)
  const after = samples.filter((sample) => settled !== undefined && sample.elapsedSeconds > settled.elapsedSeconds)
  const readings = after.map((sample) => sample.rssBytes).filter((bytes) => bytes !== null)
  if (settled?.rssBytes == null || readings.length === 0) return null
  const maxAfterBytes = Math.max(...readings)
  const growth = maxAfterBytes / settled.rssBytes - 1
  return {
    atSettleBytes: settled.rssBytes,
    maxAfterBytes,
    lastBytes: readings[readings.length - 1]!,
    growth,
    flat: growth <= tolerance
  }
}
