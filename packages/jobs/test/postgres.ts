import { PgClient } from "@effect/sql-pg"
import { SqlClient } from "@effect/sql/SqlClient"
import { Context, Effect, Layer, Option } from "effect"
import { JobQueue, layerSql, migrate } from "../src/index"
import { createTestDatabase as createDatabase, testPool } from "@civicstack/kit/testing"
import { TestBackend } from "./helpers"

/** A fresh database with the jobs schema migrated; `drop` removes it. */
export const createTestDatabase = (serverUrl: string, purpose: string) =>
  createDatabase(serverUrl, `civicstack_jobs_${purpose}`, migrate)

const copyLayer = (url: string) =>
  Layer.unwrapEffect(Effect.map(PgClient.PgClient, (client) => layerSql({ listen: client.listen }))).pipe(
    Layer.provideMerge(testPool(url))
  )

/** Per test: empty tables, the queue under test, and a second copy with its own connection pool. */
export const postgresBackend = (databaseUrl: () => string): Layer.Layer<JobQueue | TestBackend, unknown> =>
  Layer.unwrapEffect(Effect.sync(() => {
    const url = databaseUrl()
    return Layer.scoped(
      TestBackend,
      Effect.gen(function*() {
        const sql = yield* SqlClient
        yield* sql`TRUNCATE jobs.jobs, jobs.schedules RESTART IDENTITY`
        const secondCopy = yield* Layer.build(copyLayer(url))
        return {
          secondCopy: Context.make(JobQueue, Context.get(secondCopy, JobQueue)),
          transaction: Option.some(sql.withTransaction)
        }
      })
    ).pipe(Layer.provideMerge(copyLayer(url)))
  }))
