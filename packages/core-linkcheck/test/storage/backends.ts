import { PgliteClient } from "@civicstack/sql-pglite"
import { SqlClient } from "@effect/sql/SqlClient"
import { Context, Effect, Layer, ManagedRuntime } from "effect"
import { createTestDatabase as createDatabase, testPool } from "@civicstack/kit/testing"
import { migrate } from "../../src/migrations/index"
import { LinkcheckStore } from "../../src/storage/LinkcheckStore"
import { layerMemory } from "../../src/storage/memory"
import { layerSql } from "../../src/storage/sql"

/** Another copy of the store over the same data, as a second server would have (on PostgreSQL: its own pool). */
export class SecondCopy extends Context.Tag("@civicstack/core-linkcheck/test/SecondCopy")<
  SecondCopy,
  Context.Tag.Service<LinkcheckStore>
>() {}

export type StoreUnderTest = LinkcheckStore | SecondCopy

const secondCopyOf = (store: Layer.Layer<LinkcheckStore, unknown, SqlClient>) =>
  Layer.effect(SecondCopy, LinkcheckStore).pipe(Layer.provide(store))

export const memoryBackend = (): Layer.Layer<StoreUnderTest> =>
  Layer.effect(SecondCopy, LinkcheckStore).pipe(Layer.provideMerge(layerMemory))

const emptyTables = Layer.effectDiscard(Effect.flatMap(SqlClient, (sql) =>
  sql`TRUNCATE linkcheck.webhook_attempts, linkcheck.batch_links, linkcheck.batches, linkcheck.checks, linkcheck.workers
    RESTART IDENTITY`))

/** Opening PGlite takes seconds, so a test file shares one in-memory database and each test empties its tables. */
export const sharedPglite = () => {
  const database = ManagedRuntime.make(Layer.provideMerge(Layer.effectDiscard(migrate), PgliteClient.layer({})))
  return {
    open: () => database.runtime(),
    close: () => database.dispose(),
    /** Its one session serves both copies. */
    backend: (): Layer.Layer<StoreUnderTest, unknown> =>
      Layer.unwrapEffect(Effect.map(database.runtimeEffect, (runtime) =>
        Layer.mergeAll(layerSql, secondCopyOf(Layer.fresh(layerSql))).pipe(
          Layer.provide(emptyTables),
          Layer.provide(Layer.succeedContext(runtime.context))
        )))
  }
}

/** A database of its own with the linkcheck schema migrated; `drop` removes it. */
export const createTestDatabase = (serverUrl: string) => createDatabase(serverUrl, "lcstore", migrate)

/** Per test: empty tables, the store under test, and a second copy with a connection pool of its own. */
export const postgresBackend = (databaseUrl: string): Layer.Layer<StoreUnderTest, unknown> =>
  Layer.merge(
    layerSql.pipe(Layer.provide(emptyTables), Layer.provide(testPool(databaseUrl))),
    secondCopyOf(Layer.fresh(layerSql)).pipe(Layer.provide(testPool(databaseUrl)))
  )
