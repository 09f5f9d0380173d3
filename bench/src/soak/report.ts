import type { BackendOutcome, RouteTotals } from "./backendRun"
import { megabytes, samplesTable } from "./sample"
import type { SoakSettings } from "./settings"

const row = (cells: ReadonlyArray<string>) => `| ${cells.join(" | ")} |`
const fixed = (value: number | null, digits = 0) => (value === null ? "-" : value.toFixed(digits))

const backendTitle = { pg: "PostgreSQL", pglite: "PGlite" } as const

const statuses = (totals: RouteTotals) =>
  [...totals.unexpectedStatuses].sort(([a], [b]) => a - b).map(([status, count]) => `${count}× ${status}`).join(", ")

const totalsTable = (totals: ReadonlyArray<RouteTotals>) =>
  [
    row(["route", "connections", "rate cap /s", "requests", "requests/s", "p50 ms", "p99 ms", "5xx", "other non-2xx", "errors", "statuses other than 2xx"]),
    row(["---", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---"]),
    ...totals.map((route) =>
      row([
        route.route,
        String(route.connections),
        route.rate === undefined ? "-" : String(route.rate),
        String(route.figures.requests),
        fixed(route.figures.requests / route.seconds),
        fixed(route.figures.p50Ms, 1),
        fixed(route.figures.p99Ms, 1),
        String(route.figures.status5xx),
        String(route.figures.statusOther),
        String(route.figures.errors),
        statuses(route) || "-"
      ])
    )
  ].join("\n")

/** One backend's section: the windows, the totals per route, and whether the targets were met. */
export const renderBackend = (outcome: BackendOutcome, settings: SoakSettings): string => {
  const title = backendTitle[outcome.backend]
  if (outcome._tag === "NotRun") return `### ${title}\n\nNot run: ${outcome.reason}\n`
  const total5xx = outcome.totals.reduce((sum, route) => sum + route.figures.status5xx, 0)
  const totalOther = outcome.totals.reduce((sum, route) => sum + route.figures.statusOther, 0)
  const totalErrors = outcome.totals.reduce((sum, route) => sum + route.figures.errors, 0)
  const { rss } = outcome
  const tolerance = `${(settings.rssTolerance * 100).toFixed(0)}%`
  const rssLine = rss === null
    ? `RSS: too few readings to judge (at least one at and one after ${settings.settleSeconds} s are needed)`
    : `RSS: ${megabytes(rss.atSettleBytes)} MB at ${settings.settleSeconds} s, at most ${megabytes(rss.maxAfterBytes)} MB after it ` +
      `(${rss.growth >= 0 ? "+" : ""}${(rss.growth * 100).toFixed(1)}%), ${megabytes(rss.lastBytes)} MB at the end: ` +
      `${rss.flat ? `flat within ${tolerance}` : `NOT flat within ${tolerance}`}`
  const levels = [...outcome.log.linesByLevel].map(([level, count]) => `${count} ${level}`).join(", ") || "none"
  return [
    `### ${title}, started ${outcome.startedAt.toISOString().slice(0, 19)}Z`,
    "",
    "Per window: requests answered · p50 / p99 ms.",
    "",
    samplesTable(outcome.samples),
    "",
    totalsTable(outcome.totals),
    "",
    `- 5xx: ${total5xx}${total5xx === 0 ? " (target met)" : " (target NOT met: zero 5xx)"}; other non-2xx: ${totalOther}; errors (timeouts, connections): ${totalErrors}`,
    `- ${rssLine}`,
    ...outcome.notes.map((note) => `- ${note}`),
    `- server output (${outcome.logFile}): ${levels}`,
    ...outcome.log.topProblems.map((problem) => `  - ${problem.count}× ${problem.level}: ${problem.message.replaceAll("|", "/")}`),
    ""
  ].join("\n")
}
