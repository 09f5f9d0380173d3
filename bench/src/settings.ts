import { Config } from "effect"

/** Knobs shared by every system, so that each one is measured under the same load. */
export interface BenchSettings {
  readonly jobs: number
  /** Independent worker instances per system, each with its own connection pool. */
  readonly workers: number
  /** Jobs a single worker instance handles at once. */
  readonly concurrency: number
  /** Concurrent one-by-one enqueue calls of the producer. */
  readonly enqueueConcurrency: number
  /** Jobs per call when a system's bulk insert is used. */
  readonly bulkSize: number
  /** The larger batch of the second pg-boss configuration. */
  readonly pgBossLargeBatch: number
  /** A run that starts no new job for this long is stopped and reported as failed. */
  readonly stallSeconds: number
  /** Server on which each system gets a database of its own. */
  readonly databaseUrl: string
  /** Print how long each of our JobQueue's operations took, per run, on stderr. */
  readonly queueTimings: boolean
}

const positiveInteger = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.withDefault(fallback),
    Config.validate({ message: `${name} must be a positive integer`, validation: (value) => value > 0 })
  )

export const loadSettings: Config.Config<BenchSettings> = Config.all({
  jobs: positiveInteger("BENCH_JOBS", 20_000),
  workers: positiveInteger("BENCH_WORKERS", 2),
  concurrency: positiveInteger("BENCH_CONCURRENCY", 10),
  enqueueConcurrency: positiveInteger("BENCH_ENQUEUE_CONCURRENCY", 20),
  bulkSize: positiveInteger("BENCH_BULK_SIZE", 1_000),
  pgBossLargeBatch: positiveInteger("BENCH_PGBOSS_BATCH", 1_000),
  stallSeconds: positiveInteger("BENCH_STALL_SECONDS", 60),
  databaseUrl: Config.string("BENCH_DATABASE_URL").pipe(
    Config.withDefault("postgres://postgres@127.0.0.1:5432/postgres")
  ),
  queueTimings: Config.boolean("BENCH_QUEUE_TIMINGS").pipe(Config.withDefault(false))
})
