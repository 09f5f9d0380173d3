import { Console, Effect, Option } from "effect"
import { Logger, makeWorkerUtils, run, runMigrations } from "graphile-worker"
import { failWith } from "../benchError"
import { decodeJobPayload } from "../payload"
import type { BenchSettings } from "../settings"
import type { ServerSystem } from "../system"

const taskName = "bench"

/** Keeps graphile-worker's per-job info lines out of the output; warnings and errors go to stderr. */
const quietLogger = new Logger(() => (level, message) => {
  if (String(level) === "error" || String(level) === "warning") console.error(`graphile-worker ${level}: ${message}`)
})

/** The pool size graphile-worker's docs recommend: 10 or concurrency + 2, whichever is larger. */
const poolSizeFor = (settings: BenchSettings) => Math.max(10, settings.concurrency + 2)
/** The local queue size graphile-worker's release notes recommend: concurrency + 1. */
const localQueueSizeFor = (settings: BenchSettings) => settings.concurrency + 1

/**
 * graphile-worker 0.17: one `run()` runner per worker instance with the shared concurrency,
 * and the batching its performance page recommends (local queue, batched completion).
 */
export const graphileWorkerSystem: ServerSystem = {
  id: "graphile-worker",
  label: "graphile-worker",
  backend: "PostgreSQL",
  ours: false,
  hasBulkInsert: true,
  describe: (settings) =>
    `${settings.workers} run() runners, each concurrency ${settings.concurrency}, maxPoolSize ${
      poolSizeFor(settings)
    }, localQueue.size ${
      localQueueSizeFor(settings)
    }, completeJobBatchDelay 0, noHandleSignals; producer: makeWorkerUtils, addJob() one by one, addJobs() in bulk`,
  start: ({ databaseUrl, recorder, settings }) =>
    Effect.gen(function* () {
      const connectionString = databaseUrl
      yield* Effect.tryPromise({
        try: () => runMigrations({ connectionString, logger: quietLogger }),
        catch: failWith("graphile-worker migrations failed")
      })
      const utils = yield* Effect.acquireRelease(
        Effect.tryPromise({
          try: () => makeWorkerUtils({ connectionString, logger: quietLogger }),
          catch: failWith("graphile-worker utils did not start")
        }),
        (utils) => Effect.promise(async () => utils.release())
      )
      yield* Effect.forEach(
        Array.from({ length: settings.workers }),
        () =>
          Effect.acquireRelease(
            Effect.tryPromise({
              try: () =>
                run({
                  connectionString,
                  concurrency: settings.concurrency,
                  maxPoolSize: poolSizeFor(settings),
                  noHandleSignals: true,
                  logger: quietLogger,
                  taskList: {
                    [taskName]: async (payload) => {
                      recorder.record(decodeJobPayload(payload))
                    }
                  },
                  preset: {
                    worker: {
                      localQueue: { size: localQueueSizeFor(settings) },
                      completeJobBatchDelay: 0,
                      failJobBatchDelay: 0
                    }
                  }
                }),
              catch: failWith("graphile-worker runner did not start")
            }),
            (runner) =>
              Effect.tryPromise(() => runner.stop()).pipe(
                Effect.catchAll((error) => Console.error("graphile-worker runner did not stop cleanly", error))
              )
          ),
        { discard: true }
      )
      return {
        enqueue: (payload) =>
          Effect.tryPromise({
            try: () => utils.addJob(taskName, payload),
            catch: failWith("graphile-worker addJob failed")
          }).pipe(Effect.asVoid),
        enqueueBulk: Option.some((payloads) =>
          Effect.tryPromise({
            try: () => utils.addJobs(payloads.map((payload) => ({ identifier: taskName, payload }))),
            catch: failWith("graphile-worker addJobs failed")
          }).pipe(Effect.asVoid)
        )
      }
    })
}
