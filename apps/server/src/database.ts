import { type DataDirectoryInUse, type DataDirectoryNotEmpty, PgliteClient } from "@civicstack/sql-pglite"
import type { SqlClient } from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { PgClient } from "@effect/sql-pg"
import { Context, Duration, Effect, Layer, Option, Redacted } from "effect"
import type { ConfigError } from "effect/ConfigError"
import type { Stream } from "effect"
import * as Path from "node:path"
import * as v8 from "node:v8"
import pg from "pg"
import type { ServerConfig } from "./config"
import { pgListen } from "./pgListen"

/** LISTEN support of the chosen database, for workers that wake on NOTIFY instead of waiting for their next poll. */
export class DatabaseNotifications extends Context.Tag("@civicstack/server/DatabaseNotifications")<
  DatabaseNotifications,
  { readonly listen: (channel: string) => Stream.Stream<string, SqlError> }
>() {}

/**
 * Fails when the database can never answer again, so that the server stops and its supervisor starts it again. Only
 * the embedded database can be lost: the server rides out a PostgreSQL outage, reconnecting when it ends.
 */
export class DatabaseLost extends Context.Tag("@civicstack/server/DatabaseLost")<
  DatabaseLost,
  Effect.Effect<never, SqlError>
>() {}

/** How the connection pool is used now. */
export interface ConnectionFigures {
  readonly max: number
  readonly used: number
  readonly idle: number
  /** Queries waiting for a connection. */
  readonly waiting: number
}

/** The PostgreSQL pool's figures; none for the embedded database, which is one connection in the process. */
export class DatabaseConnections extends Context.Tag("@civicstack/server/DatabaseConnections")<
  DatabaseConnections,
  { readonly figures: () => Option.Option<ConnectionFigures> }
>() {}

const CONNECT_TIMEOUT = Duration.seconds(5)

/**
 * The pool the PostgreSQL client runs on, made here rather than by the client so that its use can be read. As the
 * client would make it: one query at start (failing the start when the database cannot be reached), ended on close.
 */
const pgPool = (database: Extract<ServerConfig["database"], { _tag: "Postgres" }>) =>
  Effect.acquireRelease(
    Effect.suspend(() => {
      const pool = new pg.Pool({
        connectionString: Redacted.value(database.url),
        application_name: "civicstack",
        connectionTimeoutMillis: Duration.toMillis(CONNECT_TIMEOUT),
        max: database.poolSize
      })
      // an idle connection that breaks is dropped by the pool; the next query finds the outage
      pool.on("error", () => {})
      return Effect.tryPromise({
        try: () => pool.query("SELECT 1"),
        catch: (cause) => new SqlError({ cause, message: "PgClient: Failed to connect" })
      }).pipe(
        Effect.timeoutFail({ duration: CONNECT_TIMEOUT, onTimeout: () => new SqlError({ message: "PgClient: Connection timed out" }) }),
        Effect.tapError(() => Effect.promise(() => pool.end())),
        Effect.as(pool)
      )
    }),
    (pool) => Effect.promise(() => pool.end()).pipe(Effect.interruptible, Effect.timeoutOption(1000))
  )

const poolFigures = (pool: pg.Pool): ConnectionFigures => ({
  max: pool.options.max ?? 10,
  used: pool.totalCount - pool.idleCount,
  idle: pool.idleCount,
  waiting: pool.waitingCount
})

export const pgliteDirectory = (dataDir: string) => Path.resolve(dataDir, "pglite")

/**
 * PGlite lives in the server's memory: 16 MB of shared buffers (PostgreSQL's default is 128 MB) serve its small loads,
 * and `ANALYZE` (run by sql-pglite's autovacuum) samples 3,000 rows a table instead of 30,000: with email bodies in the
 * sample, the default grew the alerts bench's peak RSS by about 20 MB, and WASM memory is never given back.
 */
const PGLITE_SETTINGS = ["shared_buffers=16MB", "default_statistics_target=10"]

/**
 * V8 would compile the hot functions of PGlite's WASM build of PostgreSQL a second time with its optimising compiler,
 * which holds 50 to 80 MB more memory for no measurable gain in the server; only the baseline compiler (Liftoff) is
 * used instead. It must be set before PGlite is compiled, and it holds for WASM compiled later in the process too.
 */
const wasmBaselineCompilerOnly = Layer.effectDiscard(Effect.sync(() => v8.setFlagsFromString("--liftoff-only")))

/** What the server uses of its database, on either backend. */
export type DatabaseLayer = Layer.Layer<
  SqlClient | DatabaseNotifications | DatabaseLost | DatabaseConnections,
  SqlError | ConfigError | DataDirectoryInUse | DataDirectoryNotEmpty
>

/** PostgreSQL when DATABASE_URL is set, otherwise the embedded PGlite database in DATA_DIR. */
export const databaseLayer = (database: ServerConfig["database"]): DatabaseLayer =>
  database._tag === "Postgres"
    ? Layer.unwrapScoped(Effect.map(pgPool(database), (pool) =>
      Layer.succeedContext(
        Context.make(DatabaseNotifications, { listen: pgListen(database.url) }).pipe(
          Context.add(DatabaseLost, Effect.never),
          Context.add(DatabaseConnections, { figures: () => Option.some(poolFigures(pool)) })
        )
      ).pipe(
        // Waiting for a connection is bounded (`CONNECT_TIMEOUT`), so that work waiting through an outage fails, and is
        // tried again, rather than waiting forever on a pool whose connections the outage broke. DATABASE_POOL_SIZE
        // connections (10 by default, as pg's own default) are shared by requests and workers; the workers use few of
        // them at a time (fan-out one per notification), so that requests find one free.
        Layer.merge(PgClient.layerFromPool({ acquire: Effect.succeed(pool), applicationName: "civicstack" }))
      )
    ))
    : Layer.effectContext(
      Effect.map(
        PgliteClient.PgliteClient,
        (client) =>
          Context.make(DatabaseNotifications, { listen: client.listen }).pipe(
            Context.add(DatabaseLost, client.failure),
            Context.add(DatabaseConnections, { figures: Option.none })
          )
      )
    ).pipe(
      Layer.provideMerge(
        PgliteClient.layer({ dataDir: pgliteDirectory(database.dataDir), settings: PGLITE_SETTINGS }).pipe(
          Layer.provide(wasmBaselineCompilerOnly)
        )
      )
    )

export const describeDatabase = (database: ServerConfig["database"]) =>
  database._tag === "Postgres"
    ? `PostgreSQL at ${redactUrl(database.url)}`
    : `embedded PGlite in ${pgliteDirectory(database.dataDir)}`

const redactUrl = (url: Redacted.Redacted<string>) => {
  const parsed = new URL(Redacted.value(url))
  if (parsed.password !== "") parsed.password = "***"
  return parsed.toString()
}
