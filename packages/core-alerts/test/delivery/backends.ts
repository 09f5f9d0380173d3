import { PgliteClient } from "@civicstack/sql-pglite"
import { SqlClient } from "@effect/sql/SqlClient"
import { Effect, Layer, ManagedRuntime } from "effect"
import { createTestDatabase as createDatabase, testPool } from "@civicstack/kit/testing"
import type { EmailStore } from "../../src/delivery/EmailStore"
import { emailStoreMemory } from "../../src/delivery/storage/memory"
import { emailStoreSql } from "../../src/delivery/storage/sql"
import { migrate } from "../../src/migrations/index"
import type { AlertsStore } from "../../src/storage/AlertsStore"
import { layerMemory } from "../../src/storage/memory"
import { layerSql } from "../../src/storage/sql"

export type Stores = EmailStore | AlertsStore

export const memoryStores = (): Layer.Layer<Stores> => Layer.provideMerge(emailStoreMemory, layerMemory)

const emptyTables = Layer.effectDiscard(Effect.flatMap(SqlClient, (sql) =>
  sql`TRUNCATE alerts.email_subscriptions, alerts.emails, alerts.digest_runs, alerts.notification_matches,
    alerts.notifications, alerts.subscriptions, alerts.subscribers, alerts.subscriber_lists RESTART IDENTITY`))

const sqlStores = Layer.merge(emailStoreSql, layerSql)

/** Opening PGlite takes seconds, so a test file shares one in-memory database and each test empties its tables. */
export const sharedPglite = () => {
  const database = ManagedRuntime.make(Layer.provideMerge(Layer.effectDiscard(migrate), PgliteClient.layer({})))
  return {
    open: () => database.runtime(),
    close: () => database.dispose(),
    backend: (): Layer.Layer<Stores | SqlClient, unknown> =>
      Layer.unwrapEffect(Effect.map(database.runtimeEffect, (runtime) =>
        Layer.provideMerge(sqlStores, Layer.provideMerge(emptyTables, Layer.succeedContext(runtime.context)))))
  }
}

/** A database of its own with the alerts schema migrated; `drop` removes it. */
export const createTestDatabase = (serverUrl: string) => createDatabase(serverUrl, "alertsemails", migrate)

export const postgresStores = (databaseUrl: string): Layer.Layer<Stores | SqlClient, unknown> =>
  Layer.provideMerge(sqlStores, Layer.provideMerge(emptyTables, testPool(databaseUrl)))
