import type { Effect, Option, Scope } from "effect"
import type { BenchError } from "./benchError"
import type { JobPayload } from "./payload"
import type { Recorder } from "./recorder"
import type { BenchSettings } from "./settings"

/** The producer's view of a running system: its workers are already waiting for jobs. */
export interface QueueUnderTest {
  readonly enqueue: (payload: JobPayload) => Effect.Effect<void, BenchError>
  readonly enqueueBulk: Option.Option<(payloads: ReadonlyArray<JobPayload>) => Effect.Effect<void, BenchError>>
}

export interface StartContext {
  readonly settings: BenchSettings
  /** Every handler calls `recorder.record(payload)` first and does nothing else. */
  readonly recorder: Recorder
}

interface SystemDescription {
  /** Used by `--only=` and to name the child process's case. */
  readonly id: string
  /** Row label in the table. */
  readonly label: string
  readonly ours: boolean
  readonly hasBulkInsert: boolean
  /** How the system was configured, printed under the table. */
  readonly describe: (settings: BenchSettings) => string
}

/** A system that runs on the PostgreSQL server, in a database created for the run. */
export interface ServerSystem extends SystemDescription {
  readonly backend: "PostgreSQL"
  readonly start: (
    context: StartContext & { readonly databaseUrl: string }
  ) => Effect.Effect<QueueUnderTest, BenchError, Scope.Scope>
}

/** A system that brings its own in-process database. */
export interface EmbeddedSystem extends SystemDescription {
  readonly backend: "PGlite"
  readonly start: (context: StartContext) => Effect.Effect<QueueUnderTest, BenchError, Scope.Scope>
}

export type BenchSystem = ServerSystem | EmbeddedSystem
