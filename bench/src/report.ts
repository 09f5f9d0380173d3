import type { CaseResult, EnqueueMode, Measured } from "./caseResult"
import type { BenchSettings } from "./settings"

export interface Environment {
  readonly node: string
  readonly cpus: number
  readonly postgres: string
}

const fixed = (value: number | null, digits: number) =>
  value !== null && Number.isFinite(value) ? value.toFixed(digits) : "-"

const enqueueLabel = (mode: EnqueueMode, settings: BenchSettings) =>
  mode === "single"
    ? `one by one, ${settings.enqueueConcurrency} in flight`
    : `bulk, ${settings.bulkSize} per call`

const verdict = (result: Measured): string => {
  if (result.passed) return "ok"
  const problems = [
    result.drained ? undefined : `stalled ${result.missing} short`,
    result.missing > 0 && result.drained ? `missing ${result.missing}` : undefined,
    result.duplicates > 0 ? `duplicates ${result.duplicates}` : undefined,
    result.unknown > 0 ? `unknown ${result.unknown}` : undefined
  ].filter((problem) => problem !== undefined)
  return `FAIL (${problems.join(", ")})`
}

const row = (cells: ReadonlyArray<string>) => `| ${cells.join(" | ")} |`

const resultRow = (result: CaseResult, settings: BenchSettings): string => {
  const identity = [result.label, result.backend, enqueueLabel(result.enqueueMode, settings)]
  if (result._tag === "Crashed") {
    return row([...identity, "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", `FAIL (${result.reason.replaceAll("|", "/")})`])
  }
  return row([
    ...identity,
    String(result.jobs),
    fixed(result.elapsedMs / 1000, 2),
    fixed(result.jobsPerSecond, 0),
    fixed(result.jobs / (result.enqueueMs / 1000), 0),
    fixed(result.enqueueCallP50Ms, 1),
    fixed(result.delayP50Ms, 0),
    fixed(result.delayP99Ms, 0),
    fixed((100 * result.processCpuMs) / result.elapsedMs, 0),
    fixed(result.serverActivity && result.serverActivity.transactions / result.jobs, 1),
    fixed(result.serverActivity && result.serverActivity.rowsWritten / result.jobs, 1),
    fixed(result.loadAverage, 1),
    verdict(result)
  ])
}

/** "ours vs peer: 1.8x" for each of our rows against each peer row with the same enqueue mode. */
const ratioLines = (results: ReadonlyArray<CaseResult>): ReadonlyArray<string> => {
  const measured = results.filter((result): result is Measured => result._tag === "Measured" && result.passed)
  const ours = measured.filter((result) => result.ours)
  const peers = measured.filter((result) => !result.ours)
  return ours.flatMap((our) =>
    peers
      .filter((peer) => peer.enqueueMode === our.enqueueMode)
      .map((peer) =>
        `- ${our.label} vs ${peer.label} (${our.enqueueMode}): ${fixed(our.jobsPerSecond / peer.jobsPerSecond, 2)}x`
      )
  )
}

/** The whole printed report, as markdown. */
export const renderReport = (
  results: ReadonlyArray<CaseResult>,
  settings: BenchSettings,
  environment: Environment
): string => {
  const settingsBySystem = new Map(results.map((result) => [result.label, result.settings]))
  const ratios = ratioLines(results)
  return [
    `## Job queue throughput: ${settings.jobs} no-op jobs, ${settings.workers} workers × concurrency ${settings.concurrency}`,
    "",
    `Node ${environment.node}, ${environment.cpus} CPUs, PostgreSQL ${environment.postgres}; every system on a fresh database of the same server.`,
    "",
    row([
      "system",
      "backend",
      "enqueue",
      "jobs",
      "time s",
      "jobs/s",
      "enqueued/s",
      "enqueue call p50 ms",
      "delay p50 ms",
      "delay p99 ms",
      "process CPU %",
      "server xacts/job",
      "rows written/job",
      "load 1m",
      "check"
    ]),
    row(["---", "---", "---", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---"]),
    ...results.map((result) => resultRow(result, settings)),
    "",
    "Ours ÷ peer, jobs/s (only runs that passed the check):",
    "",
    ...(ratios.length > 0 ? ratios : ["- (no pair of passing runs to compare)"]),
    "",
    "Settings:",
    "",
    ...Array.from(settingsBySystem, ([label, description]) => `- ${label}: ${description}`),
    "",
    "Method:",
    "",
    `- time s: from the first enqueue call until the last job's handler started (handlers are no-ops); jobs/s = jobs / time.`,
    `- enqueued/s: jobs / time from the first enqueue call until the last one returned; workers run meanwhile. enqueue call p50: median duration of one call (one job, or one bulk).`,
    `- delay: Date.now() in the handler minus the Date.now() the producer wrote into the payload, first delivery of each job.`,
    `- process CPU %: CPU time of the bench process (producer and workers; for PGlite also the database) over the run, 100 = one core busy; the PostgreSQL server's share is not counted.`,
    `- server xacts/job, rows written/job: per job, the transactions and the inserted + updated + deleted rows the database saw over its life (setup included; pg_stat_database). Transactions count statements and also each LISTENing connection's read of each NOTIFY.`,
    `- load 1m: the machine's 1-minute load average at the end of the run; above the CPU count, other work on the machine competed with the run.`,
    `- check: every job number started exactly once (counted in the handler); otherwise FAIL.`,
    `- "${settings.workers} workers" are ${settings.workers} independent instances with their own connection pools, each running at most ${settings.concurrency} jobs at once; on PGlite they share the one in-process database.`,
    `- pg-boss 10 has no LISTEN/NOTIFY wake-up: each work() fetches one batch, runs it, then waits out the rest of its polling interval (0.5 s minimum), so its ceiling is instances × batchSize / 0.5 s. The "pg-boss" row holds as many jobs per instance as the others (batchSize = concurrency); the "pg-boss (large batch)" row shows it with batchSize ${settings.pgBossLargeBatch}.`
  ].join("\n")
}
