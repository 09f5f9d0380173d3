import { countOfKind, type GrowthPlanSize, linkDurationMs, type Limits, type PlannedLink } from "./linkPlan"
import type { Measured, RunNumber, RunResult } from "./runResult"
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

/** A target's cell: the value, and whether it is met; a run whose check failed meets no target. */
const judged = (result: Measured, met: boolean, value: string, target: string) =>
  result.problems.length > 0
    ? `**${value} missed** (check failed${met ? "" : `; ${target}`})`
    : met
    ? `${value} met`
    : `**${value} missed** (${target})`

/** A ratio to 2 decimals, or 3 when 2 would show the target itself. */
const ratioText = (ratio: number, target: number) =>
  `${fixed(ratio, fixed(ratio, 2) === fixed(target, 2) ? 3 : 2)}x`

const perThousand = (cpuMs: number | null, links: number) => (cpuMs === null ? null : (1000 * cpuMs) / links)

const cpuCell = (cpuMs: number | null, links: number) => {
  const value = perThousand(cpuMs, links)
  return value === null ? "-" : `${fixed(value / 1000, 2)} s`
}

const databaseCpuCell = (result: Measured) =>
  result.system === "linkinator"
    ? "-"
    : result.databaseCpuMs === null
    ? "in the server's (PGlite)"
    : result.backend === "PGlite"
    ? `${cpuCell(result.databaseCpuMs, result.links)} (PGlite's thread)`
    : cpuCell(result.databaseCpuMs, result.links)

const rssCell = (result: Measured) => {
  const mb = result.peakRssBytes / MB
  // the target is the server's; linkinator's is shown as it is
  if (result.system === "linkinator") return `${fixed(mb, 0)} MB`
  return judged(result, result.peakRssBytes < targets.peakRssBytes, `${fixed(mb, 0)} MB`, `< ${targets.peakRssBytes / MB} MB`)
}

const msCell = (ms: number | null) => (ms === null ? "-" : `${fixed(ms, 0)} ms`)

const linksPerSecond = (result: Measured) => (1000 * result.links) / result.wallMs

const verdictOfUnmeasured = (result: Exclude<RunResult, Measured>) =>
  result._tag === "Skipped" ? `skipped: ${oneLine(result.reason)}` : `FAIL (not measured: ${oneLine(result.reason)})`

const checkCell = (result: Measured) =>
  result.problems.length === 0 ? "ok" : `FAIL (${oneLine(result.problems.slice(0, 8).join("; "))}${result.problems.length > 8 ? "; ..." : ""})`

interface Column {
  readonly header: string
  readonly cell: (result: Measured) => string
}

const table = (results: ReadonlyArray<RunResult>, columns: ReadonlyArray<Column>): ReadonlyArray<string> => [
  row(["system", "limits global / per host", "batches x links", ...columns.map((column) => column.header), "check"]),
  row(["---", "---", "---:", ...columns.map(() => "---:"), "---"]),
  ...results.map((result) => {
    const identity = [systemLabel(result), limitsLabel(result.limits), `${result.batches} x ${result.links / result.batches}`]
    return result._tag === "Measured"
      ? row([...identity, ...columns.map((column) => column.cell(result)), checkCell(result)])
      : row([...identity, ...columns.map(() => "-"), verdictOfUnmeasured(result)])
  })
]

const wallColumns: ReadonlyArray<Column> = [
  { header: "wall time s", cell: (result) => fixed(result.wallMs / 1000, 2) },
  { header: "links/s", cell: (result) => fixed(linksPerSecond(result), 0) }
]

const cpuColumns: ReadonlyArray<Column> = [
  { header: "CPU per 1000 links: checker", cell: (result) => cpuCell(result.cpuMs, result.links) },
  { header: "CPU per 1000 links: database", cell: databaseCpuCell }
]

const latencyColumns: ReadonlyArray<Column> = [
  {
    header: `to first request (≤ ${targets.toFirstRequestMs} ms in run 1)`,
    cell: (result) =>
      result.run === 1 && result.toFirstRequestMs !== null
        ? judged(result, result.toFirstRequestMs <= targets.toFirstRequestMs, msCell(result.toFirstRequestMs), `≤ ${targets.toFirstRequestMs} ms`)
        : msCell(result.toFirstRequestMs)
  },
  {
    header: `last response to webhook (≤ ${targets.lastResponseToWebhookMs} ms in run 1)`,
    cell: (result) =>
      result.run === 1 && result.lastResponseToWebhookMs !== null
        ? judged(
          result,
          result.lastResponseToWebhookMs <= targets.lastResponseToWebhookMs,
          msCell(result.lastResponseToWebhookMs),
          `≤ ${targets.lastResponseToWebhookMs} ms`
        )
        : msCell(result.lastResponseToWebhookMs)
  }
]

const idealColumns = (target: number): ReadonlyArray<Column> => [
  { header: "in-order ideal s", cell: (result) => fixed(result.inOrderIdealMs / 1000, 2) },
  {
    header: `÷ in-order ideal (≤ ${target})`,
    cell: (result) => {
      const ratio = result.wallMs / result.inOrderIdealMs
      return judged(result, ratio <= target, ratioText(ratio, target), `≤ ${target}`)
    }
  }
]

const rssColumn: Column = { header: `peak RSS (< ${targets.peakRssBytes / MB} MB)`, cell: rssCell }

/** Run 1: the polite defaults. */
const run1Table = (results: ReadonlyArray<RunResult>) =>
  table(results, [...wallColumns, ...idealColumns(targets.politeIdealRatio), ...cpuColumns, ...latencyColumns, rssColumn])

const linkinatorOf = (results: ReadonlyArray<RunResult>) => results.find((result) => result.system === "linkinator")

/** Run 2: linkinator, then ours at its peaks. */
const run2Table = (results: ReadonlyArray<RunResult>) => {
  const linkinator = linkinatorOf(results)
  const pair = linkinator !== undefined && passed(linkinator) ? linkinator : undefined
  const ratioTarget = (result: Measured) =>
    result.backend === "PGlite"
      ? {
        met: (ratio: number) => ratio <= targets.linkinatorRatioPglite,
        value: targets.linkinatorRatioPglite,
        text: `≤ ${targets.linkinatorRatioPglite} on PGlite`
      }
      : {
        met: (ratio: number) => ratio < targets.linkinatorRatioPostgres,
        value: targets.linkinatorRatioPostgres,
        text: `< ${targets.linkinatorRatioPostgres} on PostgreSQL`
      }
  return table(results, [
    ...wallColumns,
    {
      header: `÷ linkinator (< ${targets.linkinatorRatioPostgres} PostgreSQL, ≤ ${targets.linkinatorRatioPglite} PGlite)`,
      cell: (result) => {
        if (result.system === "linkinator") return "-"
        if (pair === undefined) return "no passing linkinator run"
        const ratio = result.wallMs / pair.wallMs
        const target = ratioTarget(result)
        return judged(result, target.met(ratio), ratioText(ratio, target.value), target.text)
      }
    },
    ...cpuColumns,
    {
      header: `CPU per link ÷ linkinator's (≤ ${targets.cpuRatio})`,
      cell: (result) => {
        if (result.system === "linkinator") return "-"
        if (pair === undefined) return "no passing linkinator run"
        const ratio = result.cpuMs / result.links / (pair.cpuMs / pair.links)
        return judged(result, ratio <= targets.cpuRatio, ratioText(ratio, targets.cpuRatio), `≤ ${targets.cpuRatio}`)
      }
    },
    ...latencyColumns,
    { header: "fleet peak in flight / per host", cell: (result) => `${result.fleet.peakInFlight} / ${Math.max(0, ...result.fleet.peakPerHost)}` },
    rssColumn
  ])
}

/** Run 3: one batch of the growth plan, then all of them at once. */
const run3Table = (results: ReadonlyArray<RunResult>) => {
  const oneBatchOf = (result: Measured) =>
    results.find((other): other is Measured =>
      other._tag === "Measured" && other.backend === result.backend && other.batches === 1 && other.system === "civicstack"
    )
  return table(results, [
    ...wallColumns,
    { header: "ideal links/s", cell: (result) => fixed((1000 * result.links) / result.inOrderIdealMs, 0) },
    ...idealColumns(targets.growthIdealRatio),
    ...cpuColumns,
    ...latencyColumns,
    {
      header: "first / last webhook s",
      cell: (result) =>
        result.firstWebhookMs === null ? "-" : `${fixed(result.firstWebhookMs / 1000, 1)} / ${fixed(result.wallMs / 1000, 1)}`
    },
    rssColumn,
    {
      header: `peak RSS ÷ one batch's (≤ ${targets.growthRssRatio})`,
      cell: (result) => {
        if (result.batches === 1) return "-"
        const one = oneBatchOf(result)
        if (one === undefined) return "no one-batch run"
        const ratio = result.peakRssBytes / one.peakRssBytes
        return judged(result, ratio <= targets.growthRssRatio, ratioText(ratio, targets.growthRssRatio), `≤ ${targets.growthRssRatio}`)
      }
    }
  ])
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
  row(["---:", "---", "---", "---:", ...Array.from({ length: 17 }, () => "---:")]),
  ...results.filter((result): result is Measured => result._tag === "Measured").map((result) =>
    row([
      String(result.run),
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
  environment: Environment
): string =>
  [
    "## Link checking",
    "",
    `- Runs 1 and 2: one batch of ${links.length} links on ${Math.min(50, links.length)} loopback hosts (127.0.0.2 ..): ${planSummary(links)}.`,
    ...(growth.length === 0 ? [] : [`- Run 3: ${growthSize.batches} batches of ${growthSize.linksPerBatch} distinct links on ${growthSize.hosts} loopback hosts ` +
    `(127.0.1.1 .. 127.0.1.250, 127.0.2.1 ..), each batch spread evenly over them: ${planSummary(growth.flat())}.`]),
    `- Node ${environment.node}, ${environment.cpus} CPUs, PostgreSQL ${environment.postgres}. The fleet, the reference server and linkinator each run in a process of their own.`,
    ""
  ].join("\n")

const runTitles: Record<RunNumber, string> = {
  1: "### Run 1: polite defaults, one batch",
  2: "### Run 2: equal parallelism (linkinator first; ours at its peaks in flight, overall and per host)",
  3: "### Run 3: growth at the defaults (one batch of the growth plan alone, then every batch posted at once)"
}

/** One run's table, as markdown. */
export const renderRun = (run: RunNumber, results: ReadonlyArray<RunResult>, backend?: string): string =>
  [
    backend === undefined ? runTitles[run] : `${runTitles[run]}, on ${backend}`,
    "",
    ...(run === 1 ? run1Table(results) : run === 2 ? run2Table(results) : run3Table(results)),
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
    "- ÷ linkinator: our wall time over linkinator's in run 2, whose limits for ours are the most requests linkinator had in flight at once, on all hosts and on one host (fleet peak in flight / per host).",
    "- CPU per 1000 links: user + system CPU time over the run, per 1000 links, of the reference server's process (or linkinator's), and of the PostgreSQL backends serving the run's database. PGlite runs inside the server's process on a thread of its own, named `pglite`: that thread's CPU is the database's and the rest of the process's is the server's (V8's garbage collection helpers, shared by both threads, count as the server's). CPU per link ÷ linkinator's: the server's alone, the database excluded.",
    "- to first request: from the first POST to the fleet's first request; last response to webhook: from the fleet's last response to the last webhook's arrival; first / last webhook: from the first POST to the first and the last webhook.",
    "- peak RSS: `VmHWM` of the checker's process over its life (start-up included); RSS at run start: `VmRSS` when the wall time starts; peak RSS in run: `VmHWM` from then on (reset through `/proc/<pid>/clear_refs`). MB = 2^20 bytes. Peak RSS ÷ one batch's: the growth run's over that of one batch of the same plan, same backend.",
    "- first request to last response: the fleet's first request to its last response, the checking itself without the POST before it and the webhook after it; its ÷ in-order ideal: that span over the ideal's time (the ideal starts its first link at 0 and ends with its last response).",
    "- fleet mean in flight: the requests the fleet had in progress on average from its first request to its last response; ideal mean in flight: the planned latency of the row's links over the in-order ideal's time, what the ideal keeps in flight on average. Below it, slots stood empty (or requests waited for the checker).",
    "- CPU %: CPU time over the wall time, 100 = one core. machine busy %: all CPUs (100 = every core busy); load 1m at the run's end.",
    `- linkinator: \`check({ path, recurse: false, concurrency: ${linkinatorOptions.concurrency}, timeout: ${linkinatorOptions.timeoutMs} })\`, nothing skipped, no retries; it sends HEAD (a GET after a 404) and has no per-host limit.`,
    "- check: civicstack, for every batch the webhook's signature and batch id, totals (every link, none pending, ok and broken as planned); for the run, at most the global limit in flight at once and the per-host limit on every host, and each planned request received exactly once (none repeated, none unknown, none elsewhere, the planned count); linkinator, one result per link plus the page, ok and broken as planned, the planned count of requests. A target of a run whose check failed is not met."
  ].join("\n")
