/**
 * An `@effect/sql` client over PGlite (PostgreSQL compiled to WASM), in memory
 * or in a data directory, that compiles statements, binds parameters and
 * returns values as `@effect/sql-pg` does, so one body of SQL runs on both.
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import * as Statement from "@effect/sql/Statement"
import { makeCompiler } from "@effect/sql-pg/PgClient"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import * as path from "node:path"
import { runAutovacuum } from "./autovacuum"
import { createDataDirectoryIfNew, type DataDirectoryNotEmpty } from "./createDataDirectory"
import { type DataDirectoryInUse, lockDataDirectory } from "./DataDirectoryLock"
import { makeNotifications } from "./Notifications"
import { makeConnection } from "./PgliteConnection"
import { startPgliteWorker } from "./PgliteWorker"
import { makeSession } from "./Session"

export { DataDirectoryNotEmpty } from "./createDataDirectory"
export { DataDirectoryInUse, lockFileName } from "./DataDirectoryLock"

export const TypeId: TypeId = "~@civicstack/sql-pglite/PgliteClient"

export type TypeId = "~@civicstack/sql-pglite/PgliteClient"

export interface PgliteClientConfig {
  /** Directory of the database files, created if missing; `undefined` keeps the database in memory. */
  readonly dataDir?: string | undefined
  /**
   * PostgreSQL settings as `name=value`, applied at each start, e.g. `shared_buffers=16MB` to use less memory. The
   * `autovacuum` settings apply too: PGlite has no autovacuum process, so the client vacuums and analyzes due tables
   * every `autovacuum_naptime` (see `autovacuum.ts`); `autovacuum=off` stops it.
   */
  readonly settings?: ReadonlyArray<string> | undefined
  /**
   * The V8 heap limit, in MB, of the thread the database runs on (V8's default when unset). Rows on their way to the
   * caller are held there: a statement whose results pass the limit stops the thread, and with it the client (see
   * `failure`).
   */
  readonly threadHeapLimitMb?: number | undefined
  readonly transformResultNames?: ((str: string) => string) | undefined
  readonly transformQueryNames?: ((str: string) => string) | undefined
  readonly transformJson?: boolean | undefined
  readonly spanAttributes?: Record<string, unknown> | undefined
}

export interface PgliteClient extends SqlClient.SqlClient {
  readonly [TypeId]: TypeId
  readonly config: PgliteClientConfig
  /** A JSON value for a `json`/`jsonb` parameter, as `PgClient.json`. */
  readonly json: (value: unknown) => Statement.Fragment
  readonly listen: (channel: string) => Stream.Stream<string, SqlError>
  readonly notify: (channel: string, payload: string) => Effect.Effect<void, SqlError>
  /**
   * Waits as long as the database works. Fails if the thread it runs on stops before the client closes (out of memory,
   * a crash): every statement fails from then on, so a server should stop and be started again.
   */
  readonly failure: Effect.Effect<never, SqlError>
}

export const PgliteClient: Context.Tag<PgliteClient, PgliteClient> = Context.GenericTag<PgliteClient>(
  "@civicstack/sql-pglite/PgliteClient"
)

// The kind `makeCompiler` of @effect/sql-pg compiles as a JSON parameter.
const pgJson = Statement.custom<Statement.Custom<"PgJson", unknown>>("PgJson")
const json = (value: unknown): Statement.Fragment => pgJson(value)

const openPglite = (dataDir: string | undefined, config: PgliteClientConfig) =>
  Effect.tryPromise({
    try: () => startPgliteWorker({ dataDir, settings: config.settings ?? [], heapLimitMb: config.threadHeapLimitMb }),
    catch: (cause) =>
      new SqlError({
        cause,
        message: `Failed to open PGlite ${dataDir === undefined ? "in memory" : `in ${dataDir}`}: ${
          cause instanceof Error ? cause.message : String(cause)
        }`
      })
  })

export const make = (
  config: PgliteClientConfig
): Effect.Effect<PgliteClient, SqlError | DataDirectoryInUse | DataDirectoryNotEmpty, Scope.Scope | Reactivity.Reactivity> =>
  Effect.gen(function*() {
    const dataDir = config.dataDir === undefined ? undefined : path.resolve(config.dataDir)
    if (dataDir !== undefined) {
      yield* lockDataDirectory(dataDir)
      yield* createDataDirectoryIfNew(dataDir)
    }

    const session = yield* makeSession
    const database = yield* Effect.acquireRelease(
      openPglite(dataDir, config),
      (database) => session.use(Effect.ignoreLogged(Effect.tryPromise(() => database.close())))
    )

    let cursors = 0
    const driver = { database, nextCursorName: () => `sql_pglite_cursor_${++cursors}` }

    const client = yield* SqlClient.make({
      acquirer: Effect.succeed(makeConnection(driver, session.use)),
      transactionAcquirer: Effect.map(session.reserve, (access) => makeConnection(driver, access)),
      compiler: makeCompiler(config.transformQueryNames, config.transformJson),
      spanAttributes: [
        ...Object.entries(config.spanAttributes ?? {}),
        ["db.system.name", "postgresql"],
        ["db.namespace", "postgres"]
      ],
      transformRows: config.transformResultNames
        ? Statement.defaultTransforms(config.transformResultNames, config.transformJson).array
        : undefined
    })

    yield* runAutovacuum(Effect.map(session.reserve, (access) => makeConnection(driver, access)))

    const { listen, notify } = makeNotifications(database, client)
    const failure = Effect.flatMap(
      Effect.promise(() => database.failure),
      (cause) => new SqlError({ cause, message: `PGlite stopped: ${cause.message}` })
    )
    return Object.assign(client, { [TypeId]: TypeId, config, failure, json, listen, notify })
  })

const toContext = (client: PgliteClient) =>
  Context.make(PgliteClient, client).pipe(Context.add(SqlClient.SqlClient, client))

export const layer = (
  config: PgliteClientConfig
): Layer.Layer<PgliteClient | SqlClient.SqlClient, SqlError | DataDirectoryInUse | DataDirectoryNotEmpty> =>
  Layer.scopedContext(Effect.map(make(config), toContext)).pipe(Layer.provide(Reactivity.layer))

export const layerConfig = (
  config: Config.Config.Wrap<PgliteClientConfig>
): Layer.Layer<PgliteClient | SqlClient.SqlClient, ConfigError.ConfigError | SqlError | DataDirectoryInUse | DataDirectoryNotEmpty> =>
  Layer.scopedContext(Effect.flatMap(Config.unwrap(config), (resolved) => Effect.map(make(resolved), toContext))).pipe(
    Layer.provide(Reactivity.layer)
  )
