import { PgliteClient } from "@civicstack/sql-pglite"
import { SqlClient } from "@effect/sql/SqlClient"
import { Effect, Layer, ManagedRuntime } from "effect"
import { createTestDatabase as createDatabase, testPool } from "@civicstack/kit/testing"
import { migrate } from "../../src/migrations/index"
import type { SsoStore } from "../../src/storage/SsoStore"
import { layerMemory } from "../../src/storage/memory"
import { layerSqlWith } from "../../src/storage/sql"
import { PgClient } from "@effect/sql-pg"

export const memoryBackend = (): Layer.Layer<SsoStore> => layerMemory

const emptyTables = Layer.effectDiscard(Effect.flatMap(SqlClient, (sql) =>
  sql`TRUNCATE sso.signing_keys, sso.push_credentials, sso.events, sso.sessions, sso.failed_attempts, sso.refresh_tokens, sso.access_tokens, sso.grants,
    sso.permissions, sso.users, sso.applications RESTART IDENTITY`))

/** Opening PGlite takes seconds, so a test file shares one in-memory database and each test empties its tables. */
export const sharedPglite = () => {
  const database = ManagedRuntime.make(Layer.provideMerge(Layer.effectDiscard(migrate), PgliteClient.layer({})))
  return {
    open: () => database.runtime(),
    close: () => database.dispose(),
    backend: (): Layer.Layer<SsoStore, unknown> =>
      Layer.unwrapEffect(Effect.map(database.runtimeEffect, (runtime) =>
        Layer.unwrapEffect(Effect.map(PgliteClient.PgliteClient, ({ listen }) => layerSqlWith({ listen }))).pipe(
          Layer.provide(emptyTables),
          Layer.provide(Layer.succeedContext(runtime.context))
        )))
  }
}

/** A database of its own with the sso schema migrated; `drop` removes it. */
export const createTestDatabase = (serverUrl: string) => createDatabase(serverUrl, "ssostore", migrate)

/** With LISTEN, as the server runs it, so that the suite checks the store's memory of token holders too. */
export const postgresBackend = (databaseUrl: string): Layer.Layer<SsoStore, unknown> =>
  Layer.unwrapEffect(Effect.map(PgClient.PgClient, ({ listen }) => layerSqlWith({ listen }))).pipe(
    Layer.provide(emptyTables),
    Layer.provide(testPool(databaseUrl))
  )
