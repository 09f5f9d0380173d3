import { Schema } from "effect"
import type { BenchSettings } from "./settings"
import type { BenchSystem } from "./system"

/** `single`: one enqueue call per job from a bounded-parallel producer; `bulk`: the system's bulk insert. */
export const EnqueueMode = Schema.Literal("single", "bulk")
export type EnqueueMode = typeof EnqueueMode.Type

const CaseIdentity = {
  systemId: Schema.String,
  label: Schema.String,
  backend: Schema.String,
  ours: Schema.Boolean,
  enqueueMode: EnqueueMode,
  settings: Schema.String
}

/** A run that reached its end; `drained` is false when it stalled before every job started. */
export class Measured extends Schema.TaggedClass<Measured>()("Measured", {
  ...CaseIdentity,
  jobs: Schema.Number,
  drained: Schema.Boolean,
  /** From the first enqueue call to the start of the last job's (no-op) handler. */
  elapsedMs: Schema.Number,
  /** From the first enqueue call to the return of the last one. */
  enqueueMs: Schema.Number,
  /** Median duration of one enqueue call (one job, or one bulk of jobs). */
  enqueueCallP50Ms: Schema.NullOr(Schema.Number),
  /** CPU time (user + system) of the bench process, which holds the producer and the workers, over `elapsedMs`. */
  processCpuMs: Schema.Number,
  /** The machine's 1-minute load average when the run ended: other work on the machine skews the numbers. */
  loadAverage: Schema.Number,
  distinct: Schema.Number,
  duplicates: Schema.Number,
  missing: Schema.Number,
  unknown: Schema.Number,
  /** Null when no job started. */
  delayP50Ms: Schema.NullOr(Schema.Number),
  delayP99Ms: Schema.NullOr(Schema.Number),
  /** What the run cost the PostgreSQL server, setup included; null on PGlite. */
  serverActivity: Schema.NullOr(Schema.Struct({
    transactions: Schema.Number,
    rowsWritten: Schema.Number
  }))
}) {
  get passed(): boolean {
    return this.drained && this.duplicates === 0 && this.missing === 0 && this.unknown === 0
  }
  get jobsPerSecond(): number {
    return this.distinct / (this.elapsedMs / 1000)
  }
}

/** A run that could not be measured at all (setup failed, the child process died). */
export class Crashed extends Schema.TaggedClass<Crashed>()("Crashed", {
  ...CaseIdentity,
  reason: Schema.String
}) {}

export const CaseResult = Schema.Union(Measured, Crashed)
export type CaseResult = typeof CaseResult.Type

/** How a child process hands its result to the parent: one stdout line with this prefix. */
export const resultLinePrefix = "BENCH_RESULT "
export const CaseResultJson = Schema.parseJson(CaseResult)

/** The result of a case that produced no measurement. */
export const crashedCase = (
  system: BenchSystem,
  enqueueMode: EnqueueMode,
  settings: BenchSettings,
  reason: string
): Crashed =>
  new Crashed({
    systemId: system.id,
    label: system.label,
    backend: system.backend,
    ours: system.ours,
    enqueueMode,
    settings: system.describe(settings),
    reason
  })
