/** The packages' test suites on PostgreSQL (`TEST_DATABASE_URL`). */
import { PgClient } from "@effect/sql-pg"
import { SqlClient } from "@effect/sql/SqlClient"
import { Effect, Redacted } from "effect"
import { randomBytes } from "node:crypto"

/** A small connection pool, so that many suites and copies fit in the server's connection limit. */
export const testPool = (url: string) => PgClient.layer({ url: Redacted.make(url), maxConnections: 4 })

const onServer = <A, E>(url: string, effect: Effect.Effect<A, E, SqlClient>) =>
  Effect.runPromise(effect.pipe(Effect.provide(testPool(url))))

/** A database of its own on the server of `serverUrl`, named `<prefix>_<random>` and migrated; `drop` removes it. */
export const createTestDatabase = async <E>(
  serverUrl: string,
  prefix: string,
  migrate: Effect.Effect<void, E, SqlClient>
) => {
  const name = `${prefix}_${randomBytes(6).toString("hex")}`
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
