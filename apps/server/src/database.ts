import { type DataDirectoryInUse, type DataDirectoryNotEmpty, PgliteClient } from "@civicstack/sql-pglite"
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Redacted } from "effect"
import type { ConfigError } from "effect/ConfigError"
import type { Stream } from "effect"
import * as Path from "node:path"
import * as v8 from "node:v8"
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
  SqlClient | DatabaseNotifications | DatabaseLost,
  SqlError | ConfigError | DataDirectoryInUse | DataDirectoryNotEmpty
>

/** PostgreSQL when DATABASE_URL is set, otherwise the embedded PGlite database in DATA_DIR. */
export const databaseLayer = (database: ServerConfig["database"]): DatabaseLayer =>
  database._tag === "Postgres"
    ? Layer.effectContext(
      Effect.succeed(
        Context.make(DatabaseNotifications, { listen: pgListen(database.url) }).pipe(Context.add(DatabaseLost, Effect.never))
      )
    ).pipe(
      // Waiting for a connection is bounded, so that work waiting through an outage fails, and is tried again,
      // rather than waiting forever on a pool whose connections the outage broke. DATABASE_POOL_SIZE connections
      // (10 by default, as pg's own default) are shared by requests and workers; the workers use few of them at a time
      // (fan-out one per notification), so that requests find one free.
      Layer.provideMerge(PgClient.layer({
        url: database.url,
        applicationName: "civicstack",
        connectTimeout: "5 seconds",
        maxConnections: database.poolSize
      }))
    )
    : Layer.effectContext(
      Effect.map(
        PgliteClient.PgliteClient,
        (client) =>
          Context.make(DatabaseNotifications, { listen: client.listen }).pipe(Context.add(DatabaseLost, client.failure))
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
