import { JobDefinition, JobQueue, layerSql, migrate, runWorker } from "@civicstack/jobs"
import { PgliteClient } from "@civicstack/sql-pglite"
import { PgClient } from "@effect/sql-pg"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Console, Context, Effect, Layer, Option, Redacted } from "effect"
import { failWith } from "../benchError"
import { JobPayload } from "../payload"
import type { Recorder } from "../recorder"
import type { BenchSettings } from "../settings"
import type { EmbeddedSystem, QueueUnderTest, ServerSystem } from "../system"
import { makeQueueTimings } from "./queueTimings"

const Noop = JobDefinition.make({ queue: "bench", payload: JobPayload })
const pollInterval = "1 second"

type QueueContext = Context.Context<JobQueue | SqlClient>

/**
 * One connection pool with a JobQueue over it. Workers listen on the queue's LISTEN/NOTIFY
 * channel to wake at once; the producer does not, as it never waits for work.
 */
const postgresQueue = (databaseUrl: string, role: "producer" | "worker"): Layer.Layer<JobQueue | SqlClient, unknown> =>
  Layer.unwrapEffect(
    Effect.map(PgClient.PgClient, (client) => layerSql(role === "worker" ? { listen: client.listen } : {}))
  ).pipe(Layer.provideMerge(PgClient.layer({ url: Redacted.make(databaseUrl) })))

/**
 * The in-memory PGlite database with one JobQueue over it, as the reference server runs it:
 * one process, so the producer and every worker share the client and the queue.
 */
const pgliteQueue: Layer.Layer<JobQueue | SqlClient, unknown> = Layer.unwrapEffect(
  Effect.map(PgliteClient.PgliteClient, (client) => layerSql({ listen: client.listen }))
).pipe(Layer.provideMerge(PgliteClient.layer({})))

/** A worker fiber that lives until the scope closes; closing it shuts the worker down gracefully. */
const startWorker = (context: QueueContext, recorder: Recorder, settings: BenchSettings) =>
  runWorker(Noop, (payload) => Effect.sync(() => recorder.record(payload)), {
    concurrency: settings.concurrency,
    pollInterval
  }).pipe(
    Effect.tapErrorCause((cause) => Console.error("civicstack worker stopped", cause)),
    Effect.provide(context),
    Effect.forkScoped
  )

const producerOf = (context: QueueContext): QueueUnderTest => {
  const queue = Context.get(context, JobQueue)
  return {
    enqueue: (payload) => queue.enqueue(Noop, payload).pipe(Effect.mapError(failWith("enqueue failed")), Effect.asVoid),
    enqueueBulk: Option.some((payloads) =>
      queue.enqueueMany(Noop, payloads.map((payload) => ({ payload }))).pipe(
        Effect.mapError(failWith("enqueueMany failed")),
        Effect.asVoid
      )
    )
  }
}

/**
 * Builds the layer in the current scope; with `BENCH_QUEUE_TIMINGS` every JobQueue call is
 * timed and the breakdown is printed on stderr when the run's scope closes.
 */
const queueBuilder = (caseLabel: string, settings: BenchSettings) =>
  Effect.gen(function* () {
    const timings = settings.queueTimings ? Option.some(makeQueueTimings()) : Option.none()
    if (Option.isSome(timings)) {
      yield* Effect.addFinalizer(() =>
        Console.error(`[${caseLabel}] JobQueue calls, all instances:\n${timings.value.render(settings.jobs)}`)
      )
    }
    return (layer: Layer.Layer<JobQueue | SqlClient, unknown>) =>
      Layer.build(layer).pipe(
        Effect.mapError(failWith("could not connect the job queue")),
        Effect.map((context): QueueContext =>
          Option.match(timings, {
            onNone: () => context,
            onSome: (timings) => Context.add(context, JobQueue, timings.instrument(Context.get(context, JobQueue)))
          })
        )
      )
  })

const describe = (settings: BenchSettings) =>
  `${settings.workers} runWorker fibers, each concurrency ${settings.concurrency} (and the default prefetch, as many), pollInterval ${pollInterval}`

export const civicstackPostgresSystem: ServerSystem = {
  id: "civicstack-pg",
  label: "civicstack/pg",
  backend: "PostgreSQL",
  ours: true,
  hasBulkInsert: true,
  describe: (settings) =>
    `${describe(settings)}, each with its own PgClient pool (max 10) and layerSql with LISTEN; producer: its own PgClient pool and layerSql without LISTEN, enqueue() one by one, enqueueMany() in bulk`,
  start: ({ databaseUrl, recorder, settings }) =>
    Effect.gen(function* () {
      const buildQueue = yield* queueBuilder("civicstack/pg", settings)
      const producer = yield* buildQueue(postgresQueue(databaseUrl, "producer"))
      yield* migrate.pipe(Effect.provide(producer), Effect.mapError(failWith("migrations failed")))
      for (let worker = 0; worker < settings.workers; worker++) {
        yield* startWorker(yield* buildQueue(postgresQueue(databaseUrl, "worker")), recorder, settings)
      }
      return producerOf(producer)
    })
}

export const civicstackPgliteSystem: EmbeddedSystem = {
  id: "civicstack-pglite",
  label: "civicstack/pglite",
  backend: "PGlite",
  ours: true,
  hasBulkInsert: true,
  describe: (settings) =>
    `${describe(settings)}, sharing one in-memory PgliteClient and one layerSql (with LISTEN) with the producer; enqueue() one by one, enqueueMany() in bulk`,
  start: ({ recorder, settings }) =>
    Effect.gen(function* () {
      const buildQueue = yield* queueBuilder("civicstack/pglite", settings)
      const shared = yield* buildQueue(pgliteQueue)
      yield* migrate.pipe(Effect.provide(shared), Effect.mapError(failWith("migrations failed")))
      for (let worker = 0; worker < settings.workers; worker++) {
        yield* startWorker(shared, recorder, settings)
      }
      return producerOf(shared)
    })
}
