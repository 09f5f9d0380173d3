import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Random, Redacted, Schedule, Schema, type Scope } from "effect"
import { type BenchError, failWith } from "./benchError"

const onServer = <A>(serverUrl: string, statement: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
  Effect.flatMap(SqlClient.SqlClient, statement).pipe(
    Effect.provide(PgClient.layer({ url: Redacted.make(serverUrl), maxConnections: 1 }))
  )

const urlOfDatabase = (serverUrl: string, database: string): string => {
  const url = new URL(serverUrl)
  url.pathname = `/${database}`
  return url.toString()
}

/**
 * Some clients end their pools without waiting for the connections to close; dropping the
 * database under them makes those connections raise errors the libraries do not handle.
 * Waiting also lets the server count the statistics of every session that used the database.
 */
const awaitNoConnections = (sql: SqlClient.SqlClient, database: string) =>
  sql<{ readonly connections: number }>`
    SELECT count(*)::int AS connections FROM pg_stat_activity WHERE datname = ${database}
  `.pipe(
    Effect.repeat({
      schedule: Schedule.spaced("100 millis"),
      until: (rows) => (rows[0]?.connections ?? 0) === 0
    }),
    Effect.timeout("10 seconds"),
    Effect.ignore
  )

const DatabaseActivity = Schema.Struct({
  transactions: Schema.Number,
  rowsWritten: Schema.Number
})
export type DatabaseActivity = typeof DatabaseActivity.Type

const readActivity = (sql: SqlClient.SqlClient, database: string) =>
  sql`
    SELECT (xact_commit + xact_rollback)::float8 AS transactions,
      (tup_inserted + tup_updated + tup_deleted)::float8 AS "rowsWritten"
    FROM pg_stat_database WHERE datname = ${database}
  `.pipe(Effect.flatMap(Schema.decodeUnknown(Schema.Tuple(DatabaseActivity))), Effect.map(([activity]) => activity))

export interface FreshDatabase {
  readonly url: string
  /** Once every client has left: the transactions and row writes the database has seen. */
  readonly activityOnceIdle: Effect.Effect<DatabaseActivity, unknown>
}

/**
 * Creates `bench_<label>_<random>` on the server of `serverUrl` for the life of the scope.
 * The database is dropped when the scope closes, once its clients are gone (or after
 * 10 seconds, disconnecting the stragglers).
 */
export const freshDatabase = (serverUrl: string, label: string): Effect.Effect<FreshDatabase, BenchError, Scope.Scope> =>
  Effect.gen(function* () {
    const suffix = (yield* Random.nextIntBetween(0, 0x7fffffff)).toString(36)
    const name = `bench_${label.replace(/[^a-z0-9]+/gi, "_").toLowerCase()}_${suffix}`
    yield* Effect.acquireRelease(
      onServer(serverUrl, (sql) => sql`CREATE DATABASE ${sql(name)}`).pipe(
        Effect.mapError(failWith(`could not create database ${name} on ${serverUrl}`))
      ),
      () =>
        onServer(serverUrl, (sql) =>
          awaitNoConnections(sql, name).pipe(
            Effect.zipRight(sql`DROP DATABASE IF EXISTS ${sql(name)} WITH (FORCE)`)
          )).pipe(
          Effect.catchAll((error) => Effect.logWarning(`could not drop database ${name}`, error))
        )
    )
    return {
      url: urlOfDatabase(serverUrl, name),
      activityOnceIdle: onServer(serverUrl, (sql) => Effect.zipRight(awaitNoConnections(sql, name), readActivity(sql, name)))
    }
  })
