import { emptyTables, testPool } from "@civicstack/kit/testing"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Context, Layer } from "effect"
import { LinkcheckStore } from "../../src/storage/LinkcheckStore"
import { layerMemory } from "../../src/storage/memory"
import { layerSql } from "../../src/storage/sql"

/** Another copy of the store over the same data, as a second server would have (on PostgreSQL: its own pool). */
export class SecondCopy extends Context.Tag("@civicstack/core-linkcheck/test/SecondCopy")<
  SecondCopy,
  Context.Tag.Service<LinkcheckStore>
>() {}

export type StoreUnderTest = LinkcheckStore | SecondCopy

/** The tables of the `linkcheck` schema, emptied before each test. */
export const linkcheckTables = emptyTables([
  "linkcheck.webhook_attempts",
  "linkcheck.batch_links",
  "linkcheck.batches",
  "linkcheck.checks",
  "linkcheck.workers"
])

const secondCopyOf = (store: Layer.Layer<LinkcheckStore, unknown, SqlClient>) =>
  Layer.effect(SecondCopy, LinkcheckStore).pipe(Layer.provide(store))

export const memoryBackend = (): Layer.Layer<StoreUnderTest> =>
  Layer.effect(SecondCopy, LinkcheckStore).pipe(Layer.provideMerge(layerMemory()))

/** Per test on one PGlite database: empty tables, the store under test, and a second copy over its one session. */
export const pgliteBackend = (database: Layer.Layer<SqlClient, unknown>): Layer.Layer<StoreUnderTest, unknown> =>
  Layer.mergeAll(layerSql(), secondCopyOf(layerSql())).pipe(Layer.provide(linkcheckTables), Layer.provide(database))

/** Per test on PostgreSQL: empty tables, the store under test, and a second copy with a connection pool of its own. */
export const postgresBackend = (databaseUrl: string): Layer.Layer<StoreUnderTest, unknown> =>
  Layer.merge(
    layerSql().pipe(Layer.provide(linkcheckTables), Layer.provide(testPool(databaseUrl))),
    secondCopyOf(layerSql()).pipe(Layer.provide(testPool(databaseUrl)))
  )
