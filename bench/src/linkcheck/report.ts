import { countOfKind, FLEET_HOSTS, inOrderIdealMs, linkDurationMs, type Limits, lowerBoundMs, type PlannedLink } from "./linkPlan"
import type { Measured, RunResult } from "./runResult"
import { linkinatorOptions, runLimits, targets } from "./settings"

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

const limitsLabel = (limits: Limits) =>
  `${limits.global} / ${Number.isFinite(limits.perHost) ? limits.perHost : "none"}`

const identityCells = (result: RunResult) => [
  String(result.run),
  result.system === "civicstack" ? "civicstack reference server" : "linkinator 7.6.1",
  result.backend ?? "-",
  limitsLabel(result.limits)
]

const passed = (result: RunResult): result is Measured => result._tag === "Measured" && result.problems.length === 0

/** Our wall time over linkinator's in the same run, when both passed their checks. */
const ratioToLinkinator = (result: Measured, results: ReadonlyArray<RunResult>): number | undefined => {
  const linkinator = results.find((other) => other.system === "linkinator" && other.run === result.run)
  return result.system === "civicstack" && passed(result) && linkinator !== undefined && passed(linkinator)
    ? result.wallMs / linkinator.wallMs
    : undefined
}

const measuredCells = (result: Measured, results: ReadonlyArray<RunResult>, links: ReadonlyArray<PlannedLink>) => {
  const seconds = result.wallMs / 1000
  const toLinkinator = ratioToLinkinator(result, results)
  return [
    String(result.links),
    fixed(seconds, 2),
    fixed(result.links / seconds, 0),
    fixed(result.lowerBoundMs / 1000, 2),
    `${fixed(result.wallMs / result.lowerBoundMs, 2)}x`,
    `${fixed(result.wallMs / inOrderIdealMs(links, result.limits), 2)}x`,
    toLinkinator === undefined ? "-" : `${fixed(toLinkinator, 2)}x`,
    fixed(result.peakRssBytes / MB, 0),
    fixed(result.startRssBytes / MB, 0),
    fixed(result.runPeakRssBytes / MB, 0),
    result.submitMs === null ? "-" : fixed(result.submitMs / 1000, 2),
    result.toFirstRequestMs === null ? "-" : fixed(result.toFirstRequestMs / 1000, 2),
    result.lastResponseToWebhookMs === null ? "-" : fixed(result.lastResponseToWebhookMs / 1000, 2),
    String(result.fleet.peakInFlight),
    String(Math.max(0, ...result.fleet.peakPerHost)),
    String(result.fleet.requests),
    fixed((100 * result.cpuMs) / result.wallMs, 0),
    result.databaseCpuMs === null ? "-" : fixed((100 * result.databaseCpuMs) / result.wallMs, 0),
    fixed((100 * result.fleetCpuMs) / result.wallMs, 0),
    fixed(100 * result.machineBusyShare, 0),
    fixed(result.loadAverage, 1),
    result.problems.length === 0 ? "ok" : `FAIL (${oneLine(result.problems.join("; "))})`
  ]
}

const resultRow = (result: RunResult, results: ReadonlyArray<RunResult>, links: ReadonlyArray<PlannedLink>) => {
  if (result._tag === "Measured") return row([...identityCells(result), ...measuredCells(result, results, links)])
  const verdict = result._tag === "Skipped" ? `skipped: ${result.reason}` : `FAIL (not measured: ${result.reason})`
  return row([...identityCells(result), ...Array.from({ length: 21 }, () => "-"), oneLine(verdict)])
}

const verdict = (pass: boolean, value: string) => `${pass ? "PASS" : "FAIL"} (${value})`

const targetRow = (result: RunResult, results: ReadonlyArray<RunResult>) => {
  const identity = identityCells(result)
  if (result._tag === "Skipped") return row([...identity, "skipped", "skipped", "skipped"])
  if (result._tag === "NotMeasured") return row([...identity, "FAIL (not measured)", "FAIL (not measured)", "FAIL (not measured)"])
  const ratio = result.wallMs / result.lowerBoundMs
  const linkinator = results.find((other) => other.system === "linkinator" && other.run === result.run)
  const toLinkinator = ratioToLinkinator(result, results)
  const faster = linkinator === undefined
    ? "-"
    : toLinkinator === undefined
    ? "FAIL (no passing pair to compare)"
    : verdict(toLinkinator < 1, `${fixed(toLinkinator, 2)}x its time`)
  const checked = (cell: string) => (result.problems.length === 0 || cell === "-" ? cell : "FAIL (check failed)")
  return row([
    ...identity,
    checked(verdict(ratio <= targets.lowerBoundRatio, `${fixed(ratio, 2)}x`)),
    checked(faster),
    checked(verdict(result.peakRssBytes < targets.peakRssBytes, `${fixed(result.peakRssBytes / MB, 0)} MB`))
  ])
}

const planSummary = (links: ReadonlyArray<PlannedLink>) => {
  const totalSeconds = links.reduce((sum, link) => sum + linkDurationMs(link), 0) / 1000
  const count = (kind: PlannedLink["kind"]) => countOfKind(links, kind)
  return `${links.length} links on ${Math.min(FLEET_HOSTS, links.length)} loopback hosts ` +
    `(127.0.0.2 .. ; ${Math.ceil(links.length / FLEET_HOSTS)} per host): ${count("page")} pages of 20..200 ms, ` +
    `${count("redirect")} redirects (301 then a page, each hop 20..200 ms), ${count("notFound")} 404s of 20..200 ms, ` +
    `${count("slow")} slow pages of 1..3 s; ${fixed(totalSeconds, 0)} s of latency in all.`
}

const inOrderIdealLine = (run: 1 | 2, links: ReadonlyArray<PlannedLink>) => {
  const limits = runLimits[run]
  const ideal = inOrderIdealMs(links, limits)
  return `- run ${run} (${limitsLabel(limits)}): starting links in submission order the moment a slot frees takes ` +
    `${fixed(ideal / 1000, 2)} s, ${fixed(ideal / lowerBoundMs(links, limits), 2)}x the lower bound: the slow links ` +
    "started last finish after the rest."
}

/** The whole printed report, as markdown. */
export const renderReport = (
  results: ReadonlyArray<RunResult>,
  links: ReadonlyArray<PlannedLink>,
  environment: Environment
): string =>
  [
    `## Link checking: ${links.length} links`,
    "",
    planSummary(links),
    "",
    `Node ${environment.node}, ${environment.cpus} CPUs, PostgreSQL ${environment.postgres}. The fleet, the reference server and linkinator each run in a process of their own.`,
    "",
    row([
      "run",
      "system",
      "backend",
      "limits global / per host",
      "links",
      "wall time s",
      "links/s",
      "lower bound s",
      "÷ lower bound",
      "÷ in-order ideal",
      "÷ linkinator",
      "peak RSS MB",
      "RSS at run start MB",
      "peak RSS in run MB",
      "POST s",
      "to first request s",
      "last response to webhook s",
      "fleet peak in flight",
      "fleet peak per host",
      "fleet requests",
      "checker CPU %",
      "database CPU %",
      "fleet CPU %",
      "machine busy %",
      "load 1m",
      "check"
    ]),
    row(["---:", "---", "---", "---", ...Array.from({ length: 21 }, () => "---:"), "---"]),
    ...results.map((result) => resultRow(result, results, links)),
    "",
    "Targets:",
    "",
    row([
      "run",
      "system",
      "backend",
      "limits",
      `within ${targets.lowerBoundRatio}x of the lower bound`,
      "faster than linkinator",
      `peak RSS under ${targets.peakRssBytes / MB} MB`
    ]),
    row(["---:", "---", "---", "---", "---", "---", "---"]),
    ...results.filter((result) => result.system === "civicstack").map((result) => targetRow(result, results)),
    "",
    "What the limits allow when the latencies are not known ahead (simulated from the plan, no overhead):",
    "",
    ...([1, 2] as const).map((run) => inOrderIdealLine(run, links)),
    "",
    "Method:",
    "",
    "- wall time: civicstack, from sending POST /batch (every link, priority high, checked_within 0, a signed webhook) until the completion webhook arrives; linkinator, from calling `check` until it returns.",
    "- lower bound: what an ideal scheduler with no overhead could do under the row's limits, from the planned latencies (a redirect's two hops add up): max(all links' time ÷ global limit, the busiest host's time ÷ per-host limit, the longest link).",
    "- ÷ in-order ideal: wall time over that of an ideal scheduler that does not know the latencies ahead and starts the links in submission order the moment the row's limits allow, with no overhead (simulated from the plan); the part above 1 is the checker's own overhead.",
    "- ÷ linkinator: our wall time over linkinator's in the same run (below 1 is faster); only between runs that passed their check.",
    "- peak RSS: `VmHWM` of the checker's process over its life (the reference server's just before it is stopped, start-up included; linkinator's process after `check`); RSS at run start: `VmRSS` when the wall time starts; peak RSS in run: `VmHWM` from then on (reset through `/proc/<pid>/clear_refs`). The reference server runs from its build (`apps/server/dist`) when `npm run build` has made it, else from the TypeScript sources through tsx, whose loader adds memory; linkinator runs through tsx. MB = 2^20 bytes.",
    "- POST s: how long POST /batch took to answer 202, a part of the wall time; to first request s: from sending the POST to the fleet's first request; last response to webhook s: from the fleet's last response to the webhook's arrival.",
    "- fleet peak in flight: the most requests all fleet hosts had in progress at once; fleet peak per host: the most one host had; fleet requests: all requests the fleet received during the run.",
    "- CPU %: CPU time over the wall time, 100 = one core: of the checker's process, of the PostgreSQL backends connected to the run's database (on PGlite the database is inside the server's process), of the fleet. machine busy %: all CPUs (100 = every core busy); load 1m at the run's end. Above the CPU count, other work competed with the run.",
    `- linkinator: \`check({ path, recurse: false, concurrency: ${linkinatorOptions.concurrency}, timeout: ${linkinatorOptions.timeoutMs} })\`, nothing skipped, no retries; it sends HEAD (a GET after a 404) and has no per-host limit.`,
    "- check: civicstack, the webhook's signature, totals (every link, none pending, ok and broken as planned), at most the global limit in flight at once and the per-host limit on every host, and each planned request served once; linkinator, one result per link plus the page, ok and broken as planned."
  ].join("\n")
