import { PgClient } from "@effect/sql-pg"
import { SqlClient } from "@effect/sql/SqlClient"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { JobQueue, layerSql, migrate } from "../src/index"
import { TestBackend } from "./helpers"

const serverLayer = (url: string) => PgClient.layer({ url: Redacted.make(url), maxConnections: 4 })

const onServer = <A, E>(url: string, effect: Effect.Effect<A, E, SqlClient>) =>
  Effect.runPromise(effect.pipe(Effect.provide(serverLayer(url))))

/** A fresh database on the server of `serverUrl`, with the jobs schema migrated; `drop` removes it. */
export const createTestDatabase = async (serverUrl: string, purpose: string) => {
  const name = `civicstack_jobs_${purpose}_${randomBytes(4).toString("hex")}`
  await onServer(serverUrl, Effect.flatMap(SqlClient, (sql) => sql.unsafe(`CREATE DATABASE ${name}`)))
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  const databaseUrl = url.toString()
  await onServer(databaseUrl, migrate)
  return {
    url: databaseUrl,
    drop: () =>
      onServer(serverUrl, Effect.flatMap(SqlClient, (sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)))
  }
}

const copyLayer = (url: string) =>
  Layer.unwrapEffect(Effect.map(PgClient.PgClient, (client) => layerSql({ listen: client.listen }))).pipe(
    Layer.provideMerge(serverLayer(url))
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
