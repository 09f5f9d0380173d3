import { PgliteClient } from "@civicstack/sql-pglite"
import { SqlClient } from "@effect/sql/SqlClient"
import { Effect, Layer, ManagedRuntime } from "effect"
import { createTestDatabase as createDatabase, testPool } from "@civicstack/kit/testing"
import { migrate } from "../../src/migrations/index"
import type { AlertsStore } from "../../src/storage/AlertsStore"
import { layerMemory } from "../../src/storage/memory"
import { layerSql } from "../../src/storage/sql"

export const memoryBackend = (): Layer.Layer<AlertsStore> => layerMemory

const emptyTables = Layer.effectDiscard(Effect.flatMap(SqlClient, (sql) =>
  sql`TRUNCATE alerts.notifications, alerts.subscriptions, alerts.subscribers, alerts.subscriber_lists RESTART IDENTITY CASCADE`))

/** Opening PGlite takes seconds, so a test file shares one in-memory database and each test empties its tables. */
export const sharedPglite = () => {
  const database = ManagedRuntime.make(Layer.provideMerge(Layer.effectDiscard(migrate), PgliteClient.layer({})))
  return {
    open: () => database.runtime(),
    close: () => database.dispose(),
    backend: (): Layer.Layer<AlertsStore, unknown> =>
      Layer.unwrapEffect(Effect.map(database.runtimeEffect, (runtime) =>
        layerSql.pipe(Layer.provide(emptyTables), Layer.provide(Layer.succeedContext(runtime.context)))))
  }
}

/** A database of its own with the alerts schema migrated; `drop` removes it. */
export const createTestDatabase = (serverUrl: string) => createDatabase(serverUrl, "alertsstore", migrate)

export const postgresBackend = (databaseUrl: string): Layer.Layer<AlertsStore, unknown> =>
  layerSql.pipe(Layer.provide(emptyTables), Layer.provide(testPool(databaseUrl)))
