import { Console, Effect, Option } from "effect"
import PgBoss from "pg-boss"
import { failWith } from "../benchError"
import { decodeJobPayload } from "../payload"
import type { BenchSettings } from "../settings"
import type { ServerSystem } from "../system"

const queueName = "bench"
/** The smallest polling interval pg-boss 10 accepts. */
const pollingIntervalSeconds = 0.5

/** A started pg-boss instance with its own connection pool, stopped when the scope closes. */
const startedBoss = (connectionString: string) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const boss = new PgBoss({ connectionString })
        boss.on("error", (error) => console.error("pg-boss error:", error))
        await boss.start()
        return boss
      },
      catch: failWith("pg-boss did not start")
    }),
    (boss) =>
      Effect.tryPromise(() => boss.stop({ graceful: true, wait: true, timeout: 5_000 })).pipe(
        Effect.catchAll((error) => Console.error("pg-boss did not stop cleanly", error))
      )
  )

/**
 * pg-boss 10, configured as its docs advise for throughput: `work()` polling at the minimum
 * interval with a batch. `batchSizeOf` picks the batch a worker instance fetches and hands
 * to the handler at once; every batch's jobs are handled before the next fetch.
 */
export const pgBossSystem = (options: {
  readonly id: string
  readonly label: string
  readonly batchSizeOf: (settings: BenchSettings) => number
}): ServerSystem => ({
  id: options.id,
  label: options.label,
  backend: "PostgreSQL",
  ours: false,
  hasBulkInsert: true,
  describe: (settings) =>
    `${settings.workers} PgBoss instances (pool max 10 each), each with one work() of batchSize ${
      options.batchSizeOf(settings)
    } and pollingIntervalSeconds ${pollingIntervalSeconds}; producer: a separate PgBoss instance, send() one by one, insert() in bulk`,
  start: ({ databaseUrl, recorder, settings }) =>
    Effect.gen(function* () {
      const producer = yield* startedBoss(databaseUrl)
      yield* Effect.tryPromise({
        try: () => producer.createQueue(queueName),
        catch: failWith("pg-boss could not create its queue")
      })
      const batchSize = options.batchSizeOf(settings)
      yield* Effect.forEach(
        Array.from({ length: settings.workers }),
        () =>
          Effect.flatMap(startedBoss(databaseUrl), (worker) =>
            Effect.tryPromise({
              try: () =>
                worker.work(queueName, { batchSize, pollingIntervalSeconds }, async (jobs) => {
                  for (const job of jobs) recorder.record(decodeJobPayload(job.data))
                }),
              catch: failWith("pg-boss worker did not start")
            })),
        { discard: true }
      )
      return {
        enqueue: (payload) =>
          Effect.tryPromise({
            try: () => producer.send(queueName, payload),
            catch: failWith("pg-boss send failed")
          }).pipe(Effect.asVoid),
        enqueueBulk: Option.some((payloads) =>
          Effect.tryPromise({
            try: () => producer.insert(payloads.map((data) => ({ name: queueName, data }))),
            catch: failWith("pg-boss insert failed")
          })
        )
      }
    })
})
