import { median } from "../percentile"
import { countOfKind, type GrowthPlanSize, linkDurationMs, type Limits, type PlannedLink } from "./linkPlan"
import type { Backend, Measured, RunNumber, RunResult } from "./runResult"
import { linkinatorOptions, targets } from "./settings"

export interface Environment {
  readonly node: string
  readonly cpus: number
  /** The PostgreSQL server's version, or why it could not be reached. */
  readonly postgres: string
}

const MB = 1024 * 1024

const fixed = (value: number, digits: number) => (Number.isFinite(value) ? value.toFixed(digits) : "-")
const row = (cells: ReadonlyArray<string>) => `| ${cells.join(" | ")} |`
const oneLine = (text: string) => text.replaceAll("|", "/").replaceAll("\n", " ")

export const limitsLabel = (limits: Limits) =>
  `${limits.global} / ${Number.isFinite(limits.perHost) ? limits.perHost : "none"}`

const systemLabel = (result: RunResult) =>
  result.system === "civicstack" ? `civicstack on ${result.backend}` : "linkinator 7.6.1"

const passed = (result: RunResult): result is Measured => result._tag === "Measured" && result.problems.length === 0

/** A bound a figure is judged against: below it (`strict`) or at most it. */
interface Target {
  readonly limit: number
  readonly strict: boolean
  /** How the target reads in a missed cell. */
  readonly text: string
}

const atMost = (limit: number, text = `≤ ${limit}`): Target => ({ limit, strict: false, text })
const below = (limit: number, text: string): Target => ({ limit, strict: true, text })
const meets = (target: Target, figure: number) => (target.strict ? figure < target.limit : figure <= target.limit)

/** A target's cell: the value, and whether it is met; a run whose check failed meets no target. */
const judged = (failed: boolean, met: boolean, value: string, target: string) =>
  failed
    ? `**${value} missed** (check failed${met ? "" : `; ${target}`})`
    : met
    ? `${value} met`
    : `**${value} missed** (${target})`

/** A ratio to 2 decimals, or 3 when 2 would show its target itself. */
const ratioText = (ratio: number, target: number | undefined) =>
  `${fixed(ratio, target !== undefined && fixed(ratio, 2) === fixed(target, 2) ? 3 : 2)}x`

/** One measured result, with the result of linkinator in the same round when that one passed (run 2). */
interface Round {
  readonly result: Measured
  readonly linkinator: Measured | undefined
}

interface Column {
  readonly header: string
  /** A round's figure, or the text shown instead of one. */
  readonly figure: (round: Round) => number | string
  readonly show: (figure: number, result: Measured) => string
  /** The target of the result's figure, if it has one. */
  readonly target?: (result: Measured) => Target | undefined
}

/** A figure's cell, judged against the column's target when `judge`. */
const figureCell = (column: Column, figure: number | string, result: Measured, judge: boolean) => {
  if (typeof figure === "string") return figure
  const value = column.show(figure, result)
  const target = judge ? column.target?.(result) : undefined
  return target === undefined ? value : judged(result.problems.length > 0, meets(target, figure), value, target.text)
}

const sameOrVaries = (texts: ReadonlyArray<string | number>) =>
  texts.every((text) => text === texts[0]) ? String(texts[0] ?? "-") : "varies"

/**
 * The median of the figures of the rounds that have one, judged; when none has one, the rounds' text (`varies` when
 * they differ).
 */
const medianCell = (column: Column, rounds: ReadonlyArray<Round>) => {
  const figures = rounds.map(column.figure)
  const numbers = figures.filter((figure): figure is number => typeof figure === "number")
  const middle = median(numbers)
  if (middle === null || rounds[0] === undefined) return sameOrVaries(figures)
  const cell = figureCell(column, middle, rounds[0].result, true)
  return numbers.length < rounds.length ? `${cell} (of ${numbers.length} rounds)` : cell
}

/** A table's row: one result, or (runs 1 and 2) the median of one system's rounds that passed their check. */
type Row =
  | { readonly _tag: "Result"; readonly result: RunResult; readonly linkinator: Measured | undefined; readonly judge: boolean }
  | { readonly _tag: "Median"; readonly results: ReadonlyArray<RunResult>; readonly rounds: ReadonlyArray<Round> }

const verdictOfUnmeasured = (result: Exclude<RunResult, Measured>) =>
  result._tag === "Skipped" ? `skipped: ${oneLine(result.reason)}` : `FAIL (not measured: ${oneLine(result.reason)})`

const checkCell = (result: Measured) =>
  result.problems.length === 0 ? "ok" : `FAIL (${oneLine(result.problems.slice(0, 8).join("; "))}${result.problems.length > 8 ? "; ..." : ""})`

const batchesCell = (result: RunResult) => `${result.batches} x ${result.links / result.batches}`

/** A row's cells: its round, system, limits and batches, the columns' and the check's. */
const rowCells = (tableRow: Row, columns: ReadonlyArray<Column>): ReadonlyArray<string> => {
  if (tableRow._tag === "Median") {
    const { results, rounds } = tableRow
    const first = results[0]!
    const leftOut = results.length - rounds.length
    return [
      `median of ${rounds.length}`,
      systemLabel(first),
      sameOrVaries(results.map((result) => limitsLabel(result.limits))),
      batchesCell(first),
      ...columns.map((column) => medianCell(column, rounds)),
      leftOut === 0 ? "ok" : `${leftOut} of ${results.length} rounds left out (not passed)`
    ]
  }
  const { result, linkinator, judge } = tableRow
  return [
    `round ${result.round}`,
    systemLabel(result),
    limitsLabel(result.limits),
    batchesCell(result),
    ...(result._tag === "Measured"
      ? [...columns.map((column) => figureCell(column, column.figure({ result, linkinator }), result, judge)), checkCell(result)]
      : [...columns.map(() => "-"), verdictOfUnmeasured(result)])
  ]
}

/** The table of `rows`; without the round column when `inRounds` is false (run 3). */
const table = (rows: ReadonlyArray<Row>, columns: ReadonlyArray<Column>, inRounds: boolean): ReadonlyArray<string> => {
  const from = inRounds ? 0 : 1
  return [
    row(["round", "system", "limits global / per host", "batches x links", ...columns.map((column) => column.header), "check"].slice(from)),
    row(["---", "---", "---", "---:", ...columns.map(() => "---:"), "---"].slice(from)),
    ...rows.map((tableRow) => row(rowCells(tableRow, columns).slice(from)))
  ]
}

const secondsText = (seconds: number) => `${fixed(seconds, 2)} s`

/** A ratio's column: shown with the digits its target needs. */
const ratioColumn = (header: string, figure: Column["figure"], target: (result: Measured) => Target | undefined): Column => ({
  header,
  figure,
  show: (ratio, result) => ratioText(ratio, target(result)?.limit),
  target
})

const linksPerSecond = (result: Measured) => (1000 * result.links) / result.wallMs

const wallColumns: ReadonlyArray<Column> = [
  { header: "wall time s", figure: ({ result }) => result.wallMs / 1000, show: (seconds) => fixed(seconds, 2) },
  { header: "links/s", figure: ({ result }) => linksPerSecond(result), show: (rate) => fixed(rate, 0) }
]

// CPU milliseconds per link are CPU seconds per 1000 links
const cpuColumns: ReadonlyArray<Column> = [
  { header: "CPU per 1000 links: checker", figure: ({ result }) => result.cpuMs / result.links, show: secondsText },
  {
    header: "CPU per 1000 links: database",
    figure: ({ result }) =>
      result.system === "linkinator"
        ? "-"
        : result.databaseCpuMs === null
        ? "in the server's (PGlite)"
        : result.databaseCpuMs / result.links,
    show: (seconds, result) => `${secondsText(seconds)}${result.backend === "PGlite" ? " (PGlite's thread)" : ""}`
  }
]

/** A latency's column, judged in run 1. */
const latencyColumn = (name: string, limitMs: number, latencyMs: (result: Measured) => number | null): Column => ({
  header: `${name} (≤ ${limitMs} ms in run 1)`,
  figure: ({ result }) => latencyMs(result) ?? "-",
  show: (ms) => `${fixed(ms, 0)} ms`,
  target: (result) => (result.run === 1 ? atMost(limitMs, `≤ ${limitMs} ms`) : undefined)
})

const latencyColumns: ReadonlyArray<Column> = [
  latencyColumn("to first request", targets.toFirstRequestMs, (result) => result.toFirstRequestMs),
  latencyColumn("last response to webhook", targets.lastResponseToWebhookMs, (result) => result.lastResponseToWebhookMs)
]

const idealColumns = (limit: number): ReadonlyArray<Column> => [
  { header: "in-order ideal s", figure: ({ result }) => result.inOrderIdealMs / 1000, show: (seconds) => fixed(seconds, 2) },
  ratioColumn(`÷ in-order ideal (≤ ${limit})`, ({ result }) => result.wallMs / result.inOrderIdealMs, () => atMost(limit))
]

const rssLimitMb = (backend: Backend) => targets.peakRssBytes[backend] / MB

const rssColumn: Column = {
  header: `peak RSS (< ${rssLimitMb("PostgreSQL")} MB PostgreSQL, < ${rssLimitMb("PGlite")} MB PGlite)`,
  figure: ({ result }) => result.peakRssBytes / MB,
  show: (mb) => `${fixed(mb, 0)} MB`,
  // the target is the server's; linkinator's is shown as it is
  target: (result) => (result.backend === null ? undefined : below(rssLimitMb(result.backend), `< ${rssLimitMb(result.backend)} MB`))
}

/** Run 1: the polite defaults. */
const run1Columns: ReadonlyArray<Column> = [
  ...wallColumns,
  ...idealColumns(targets.politeIdealRatio),
  ...cpuColumns,
  ...latencyColumns,
  rssColumn
]

/** Ours over linkinator's of the same round: `ours` of our result over `theirs` of linkinator's. */
const toLinkinator = (ours: (result: Measured) => number | null, theirs: (result: Measured) => number) =>
({ result, linkinator }: Round): number | string => {
  if (result.system === "linkinator") return "-"
  if (linkinator === undefined) return "no passing linkinator run"
  const figure = ours(result)
  return figure === null ? "-" : figure / theirs(linkinator)
}

const wallMs = (result: Measured) => result.wallMs
const cpuPerLink = (result: Measured) => result.cpuMs / result.links
const serverAndDatabaseCpuPerLink = (result: Measured) =>
  result.databaseCpuMs === null ? null : (result.cpuMs + result.databaseCpuMs) / result.links

const linkinatorRatioTarget = (result: Measured) =>
  result.backend === "PGlite"
    ? atMost(targets.linkinatorRatioPglite, `≤ ${targets.linkinatorRatioPglite} on PGlite`)
    : below(targets.linkinatorRatioPostgres, `< ${targets.linkinatorRatioPostgres} on PostgreSQL`)

const { serverDatabaseCpuRatioPostgres } = targets

/** Run 2: linkinator, then ours at its peaks, in each round. */
const run2Columns: ReadonlyArray<Column> = [
  ...wallColumns,
  ratioColumn(
    `÷ linkinator (< ${targets.linkinatorRatioPostgres} PostgreSQL, ≤ ${targets.linkinatorRatioPglite} PGlite)`,
    toLinkinator(wallMs, wallMs),
    linkinatorRatioTarget
  ),
  ...cpuColumns,
  ratioColumn(`CPU per link ÷ linkinator's (≤ ${targets.cpuRatio})`, toLinkinator(cpuPerLink, cpuPerLink), () => atMost(targets.cpuRatio)),
  ratioColumn(
    `server + database CPU per link ÷ linkinator's (< ${serverDatabaseCpuRatioPostgres} PostgreSQL)`,
    toLinkinator(serverAndDatabaseCpuPerLink, cpuPerLink),
    (result) =>
      result.backend === "PostgreSQL" ? below(serverDatabaseCpuRatioPostgres, `< ${serverDatabaseCpuRatioPostgres} on PostgreSQL`) : undefined
  ),
  ...latencyColumns,
  {
    header: "fleet peak in flight / per host",
    figure: ({ result }) => `${result.fleet.peakInFlight} / ${Math.max(0, ...result.fleet.peakPerHost)}`,
    show: String
  },
  rssColumn
]

/** Runs 1 and 2: every round's rows as they ran, then one median row per system, over its rounds that passed. */
const roundsRows = (results: ReadonlyArray<RunResult>): ReadonlyArray<Row> => {
  const linkinatorOf = (round: number) =>
    results.find((result): result is Measured => result.system === "linkinator" && result.round === round && passed(result))
  const bySystem = new Map<string, Array<RunResult>>()
  for (const result of results) bySystem.set(systemLabel(result), [...(bySystem.get(systemLabel(result)) ?? []), result])
  return [
    ...results.map((result): Row => ({ _tag: "Result", result, linkinator: linkinatorOf(result.round), judge: false })),
    ...Array.from(bySystem.values(), (group): Row => ({
      _tag: "Median",
      results: group,
      rounds: group.filter(passed).map((result) => ({ result, linkinator: linkinatorOf(result.round) }))
    }))
  ]
}

/** Run 3: one batch of the growth plan, then all of them at once. */
const run3Columns = (results: ReadonlyArray<RunResult>): ReadonlyArray<Column> => {
  const oneBatchOf = (result: Measured) =>
    results.find((other): other is Measured =>
      other._tag === "Measured" && other.backend === result.backend && other.batches === 1 && other.system === "civicstack"
    )
  return [
    ...wallColumns,
    { header: "ideal links/s", figure: ({ result }) => (1000 * result.links) / result.inOrderIdealMs, show: (rate) => fixed(rate, 0) },
    ...idealColumns(targets.growthIdealRatio),
    ...cpuColumns,
    ...latencyColumns,
    {
      header: "first / last webhook s",
      figure: ({ result }) =>
        result.firstWebhookMs === null ? "-" : `${fixed(result.firstWebhookMs / 1000, 1)} / ${fixed(result.wallMs / 1000, 1)}`,
      show: String
    },
    rssColumn,
    ratioColumn(`peak RSS ÷ one batch's (≤ ${targets.growthRssRatio})`, ({ result }) => {
      if (result.batches === 1) return "-"
      const one = oneBatchOf(result)
      return one === undefined ? "no one-batch run" : result.peakRssBytes / one.peakRssBytes
    }, () => atMost(targets.growthRssRatio))
  ]
}

/** From the fleet's first request to its last response: the checking itself, without the POST and the webhook. */
const checkingSpanMs = (result: Measured) => {
  const { firstRequestAt, lastResponseAt } = result.fleet
  return firstRequestAt === null || lastResponseAt === null ? Number.NaN : lastResponseAt - firstRequestAt
}

/** Requests in progress at the fleet on average, from the first request to the last response. */
const meanInFlight = (result: Measured) => {
  const { firstRequestAt, lastResponseAt } = result.fleet
  return firstRequestAt === null || lastResponseAt === null || lastResponseAt <= firstRequestAt
    ? Number.NaN
    : result.fleet.inFlightArea / (lastResponseAt - firstRequestAt)
}

const detailsTable = (results: ReadonlyArray<RunResult>) => [
  row([
    "run",
    "round",
    "system",
    "limits",
    "batches x links",
    "lower bound s",
    "÷ lower bound",
    "first request to last response s",
    "its ÷ in-order ideal",
    "RSS at run start MB",
    "peak RSS in run MB",
    "POST s",
    "fleet peak in flight",
    "fleet mean in flight",
    "ideal mean in flight",
    "fleet peak per host",
    "fleet requests",
    "checker CPU %",
    "database CPU %",
    "fleet CPU %",
    "machine busy %",
    "load 1m"
  ]),
  row(["---:", "---:", "---", "---", "---:", ...Array.from({ length: 17 }, () => "---:")]),
  ...results.filter((result): result is Measured => result._tag === "Measured").map((result) =>
    row([
      String(result.run),
      result.run === 3 ? "-" : String(result.round),
      systemLabel(result),
      limitsLabel(result.limits),
      `${result.batches} x ${result.links / result.batches}`,
      fixed(result.lowerBoundMs / 1000, 2),
      `${fixed(result.wallMs / result.lowerBoundMs, 2)}x`,
      fixed(checkingSpanMs(result) / 1000, 2),
      `${fixed(checkingSpanMs(result) / result.inOrderIdealMs, 2)}x`,
      fixed(result.startRssBytes / MB, 0),
      fixed(result.runPeakRssBytes / MB, 0),
      result.submitMs === null ? "-" : fixed(result.submitMs / 1000, 2),
      String(result.fleet.peakInFlight),
      fixed(meanInFlight(result), 0),
      fixed(result.plannedLatencyMs / result.inOrderIdealMs, 0),
      String(Math.max(0, ...result.fleet.peakPerHost)),
      String(result.fleet.requests),
      fixed((100 * result.cpuMs) / result.wallMs, 0),
      result.databaseCpuMs === null ? "-" : fixed((100 * result.databaseCpuMs) / result.wallMs, 0),
      fixed((100 * result.fleetCpuMs) / result.wallMs, 0),
      fixed(100 * result.machineBusyShare, 0),
      fixed(result.loadAverage, 1)
    ])
  )
]

const planSummary = (links: ReadonlyArray<PlannedLink>) => {
  const totalSeconds = links.reduce((sum, link) => sum + linkDurationMs(link), 0) / 1000
  const count = (kind: PlannedLink["kind"]) => countOfKind(links, kind)
  return `${count("page")} pages of 20..200 ms, ${count("redirect")} redirects (301 then a page, each hop 20..200 ms), ` +
    `${count("notFound")} 404s of 20..200 ms, ${count("slow")} slow pages of 1..3 s; ${fixed(totalSeconds, 0)} s of latency in all`
}

/** The report's opening: the plans and the machine. */
export const renderHeader = (
  links: ReadonlyArray<PlannedLink>,
  growth: ReadonlyArray<ReadonlyArray<PlannedLink>>,
  growthSize: GrowthPlanSize,
  environment: Environment,
  rounds: number
): string =>
  [
    "## Link checking",
    "",
    `- Runs 1 and 2: one batch of ${links.length} links on ${Math.min(50, links.length)} loopback hosts (127.0.0.2 ..): ${planSummary(links)}. ` +
    `${rounds} round(s), each system a fresh process in each; the targets are judged on the median rows.`,
    ...(growth.length === 0 ? [] : [`- Run 3: ${growthSize.batches} batches of ${growthSize.linksPerBatch} distinct links on ${growthSize.hosts} loopback hosts ` +
    `(127.0.1.1 .. 127.0.1.250, 127.0.2.1 ..), each batch spread evenly over them: ${planSummary(growth.flat())}.`]),
    `- Node ${environment.node}, ${environment.cpus} CPUs, PostgreSQL ${environment.postgres}. The fleet, the reference server and linkinator each run in a process of their own.`,
    ""
  ].join("\n")

const runTitles: Record<RunNumber, string> = {
  1: "### Run 1: polite defaults, one batch",
  2: "### Run 2: equal parallelism (in each round linkinator first; ours at its peaks in flight, overall and per host)",
  3: "### Run 3: growth at the defaults (one batch of the growth plan alone, then every batch posted at once)"
}

/** One run's table, as markdown. */
export const renderRun = (run: RunNumber, results: ReadonlyArray<RunResult>, backend?: string): string =>
  [
    backend === undefined ? runTitles[run] : `${runTitles[run]}, on ${backend}`,
    "",
    ...(run === 3
      ? table(results.map((result): Row => ({ _tag: "Result", result, linkinator: undefined, judge: true })), run3Columns(results), false)
      : table(roundsRows(results), run === 1 ? run1Columns : run2Columns, true)),
    ""
  ].join("\n")

/** The closing part: details of every measured run, and how the numbers are made. */
export const renderFooter = (results: ReadonlyArray<RunResult>): string =>
  [
    "### Details",
    "",
    ...detailsTable(results),
    "",
    "Method:",
    "",
    "- wall time: civicstack, from sending the first POST /batch (every batch at once; each priority high, checked_within 0, a signed webhook) until the last webhook arrives; linkinator, from calling `check` until it returns. links/s: links over wall time.",
    "- in-order ideal: the wall time of an ideal scheduler that does not know the latencies ahead and starts the links in the order the server takes them (high priority first, then in the order the checks were created: for batches posted at once, the batches one after another in the order posted, each in its own order; the server has no share between batches of one priority) the moment the row's limits allow, with no overhead, simulated from the plan. ÷ in-order ideal: our wall time over it, which is also its links/s over ours. lower bound: max(all links' time ÷ global limit, the busiest host's time ÷ per-host limit, the longest link).",
    "- rounds: runs 1 and 2 run each system once per round, each time in a fresh process (in run 2 linkinator first, then ours; our backends' order alternates between rounds). A median row's cell is the median, over the system's rounds whose check passed, of the figure of each round (of an even count, the mean of the middle two); a ratio to linkinator is taken in each round against linkinator's of the same round, then the median of those. Targets are judged on the median rows; run 3 has one round.",
    "- ÷ linkinator: our wall time over linkinator's in run 2, whose limits for ours are the most requests linkinator had in flight at once in the same round, on all hosts and on one host (fleet peak in flight / per host).",
    "- CPU per 1000 links: user + system CPU time over the run, per 1000 links, of the reference server's process (or linkinator's), and of the PostgreSQL backends serving the run's database. PGlite runs inside the server's process on a thread of its own, named `pglite`: that thread's CPU is the database's and the rest of the process's is the server's (V8's garbage collection helpers, shared by both threads, count as the server's). CPU per link ÷ linkinator's: the server's alone, the database excluded; server + database CPU per link ÷ linkinator's: the server's and the database's together.",
    "- to first request: from the first POST to the fleet's first request; last response to webhook: from the fleet's last response to the last webhook's arrival; first / last webhook: from the first POST to the first and the last webhook.",
    "- peak RSS: `VmHWM` of the checker's process over its life (start-up included); RSS at run start: `VmRSS` when the wall time starts; peak RSS in run: `VmHWM` from then on (reset through `/proc/<pid>/clear_refs`). MB = 2^20 bytes. Peak RSS ÷ one batch's: the growth run's over that of one batch of the same plan, same backend.",
    "- first request to last response: the fleet's first request to its last response, the checking itself without the POST before it and the webhook after it; its ÷ in-order ideal: that span over the ideal's time (the ideal starts its first link at 0 and ends with its last response).",
    "- fleet mean in flight: the requests the fleet had in progress on average from its first request to its last response; ideal mean in flight: the planned latency of the row's links over the in-order ideal's time, what the ideal keeps in flight on average. Below it, slots stood empty (or requests waited for the checker).",
    "- CPU %: CPU time over the wall time, 100 = one core. machine busy %: all CPUs (100 = every core busy); load 1m at the run's end.",
    `- linkinator: \`check({ path, recurse: false, concurrency: ${linkinatorOptions.concurrency}, timeout: ${linkinatorOptions.timeoutMs} })\`, nothing skipped, no retries; it sends HEAD (a GET after a 404) and has no per-host limit.`,
    "- check: civicstack, for every batch the webhook's signature and batch id, totals (every link, none pending, ok and broken as planned); for the run, at most the global limit in flight at once and the per-host limit on every host, and each planned request received exactly once (none repeated, none unknown, none elsewhere, the planned count); linkinator, one result per link plus the page, ok and broken as planned, the planned count of requests. A target of a run whose check failed is not met."
  ].join("\n")
