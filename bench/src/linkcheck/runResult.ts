import { Cause, Console, Effect } from "effect"
import type { FleetStats } from "./fleetProtocol"
import type { Limits } from "./linkPlan"

export type Backend = "PostgreSQL" | "PGlite"

/**
 * Run 1: one batch at the polite defaults. Run 2: one batch, linkinator and then ours at linkinator's peaks.
 * Run 3: the growth plan, one batch of it alone and then all its batches posted at once, at the defaults.
 */
export type RunNumber = 1 | 2 | 3

/** Which run, which checker, under which limits, and what an ideal scheduler could do under them. */
export interface RunIdentity {
  readonly run: RunNumber
  /** Which round of its run, from 1 (runs 1 and 2 repeat in rounds; run 3 has one). */
  readonly round: number
  readonly system: "civicstack" | "linkinator"
  /** The reference server's database; null for linkinator. */
  readonly backend: Backend | null
  readonly limits: Limits
  /** Batches posted at once (1 but in the growth run); 1 for linkinator. */
  readonly batches: number
  readonly links: number
  readonly lowerBoundMs: number
  /** The in-order ideal of the row's links and limits (`inOrderIdealMs`). */
  readonly inOrderIdealMs: number
  /** The sum of the planned latencies of the row's links. */
  readonly plannedLatencyMs: number
}

/** What the fleet and the machine showed while a checker ran. */
export interface Observed {
  readonly fleet: FleetStats
  readonly fleetCpuMs: number
  /** Share of all CPUs' time that was busy, from 0 to 1. */
  readonly machineBusyShare: number
  readonly loadAverage: number
}

export interface Measured extends RunIdentity, Observed {
  readonly _tag: "Measured"
  readonly wallMs: number
  /** Ours: how long the POSTs took to answer (the slowest of them), a part of `wallMs`. */
  readonly submitMs: number | null
  /** Ours: from the first POST to the fleet's first request, and from its last response to the last webhook. */
  readonly toFirstRequestMs: number | null
  readonly lastResponseToWebhookMs: number | null
  /** Ours: from the first POST to the first webhook's arrival (the last one's is `wallMs`). */
  readonly firstWebhookMs: number | null
  /** The checker process's peak RSS over its whole life (start-up included). */
  readonly peakRssBytes: number
  /** Its RSS when the run's wall time started. */
  readonly startRssBytes: number
  /** Its peak RSS from the start of the run's wall time on. */
  readonly runPeakRssBytes: number
  /** CPU time over the run of the checker: the reference server's process (PGlite's thread excluded), or linkinator's. */
  readonly cpuMs: number
  /** CPU time of the database: the PostgreSQL backends serving the run's database, or PGlite's thread; null when unknown. */
  readonly databaseCpuMs: number | null
  /** What the run's check found wrong; empty when every link was checked once and reported as planned. */
  readonly problems: ReadonlyArray<string>
}

/** A run that failed before it could be measured. */
export interface NotMeasured extends RunIdentity {
  readonly _tag: "NotMeasured"
  readonly reason: string
}

/** A run left out on purpose, e.g. the PostgreSQL runs when the server cannot be reached. */
export interface Skipped extends RunIdentity {
  readonly _tag: "Skipped"
  readonly reason: string
}

export type RunResult = Measured | NotMeasured | Skipped

/** How progress lines name a run: its round too in runs 1 and 2. */
export const runLabel = (identity: Pick<RunIdentity, "run" | "round">) =>
  identity.run === 3 ? "run 3" : `run ${identity.run}, round ${identity.round}`

/** A run that stopped: the whole cause goes to stderr, its message to the report. */
export const notMeasured = (identity: RunIdentity, cause: Cause.Cause<unknown>): Effect.Effect<NotMeasured> => {
  const error = Cause.squash(cause)
  const inner = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : ""
  const message = error instanceof Error ? `${error.message}${inner}` : String(error)
  return Console.error(Cause.pretty(cause)).pipe(
    Effect.as({ ...identity, _tag: "NotMeasured" as const, reason: message.split("\n")[0] ?? message })
  )
}
