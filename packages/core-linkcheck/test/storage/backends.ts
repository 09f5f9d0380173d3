import { PgliteClient } from "@civicstack/sql-pglite"
import { PgClient } from "@effect/sql-pg"
import { SqlClient } from "@effect/sql/SqlClient"
import { Context, Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { randomBytes } from "node:crypto"
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
  sql`TRUNCATE linkcheck.webhook_attempts, linkcheck.batch_links, linkcheck.batches, linkcheck.checks
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

const serverLayer = (url: string) => PgClient.layer({ url: Redacted.make(url), maxConnections: 4 })

const onServer = <A, E>(url: string, effect: Effect.Effect<A, E, SqlClient>) =>
  Effect.runPromise(effect.pipe(Effect.provide(serverLayer(url))))

/** A database of its own on the server of `serverUrl`, migrated; `drop` removes it. */
export const createTestDatabase = async (serverUrl: string) => {
  const name = `lcstore_${randomBytes(6).toString("hex")}`
  await onServer(serverUrl, Effect.flatMap(SqlClient, (sql) => sql.unsafe(`CREATE DATABASE ${name}`)))
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  const databaseUrl = url.toString()
  await onServer(databaseUrl, migrate)
  return {
    url: databaseUrl,
    drop: () =>
      onServer(
        serverUrl,
        Effect.flatMap(SqlClient, (sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
      )
  }
}

/** Per test: empty tables, the store under test, and a second copy with a connection pool of its own. */
export const postgresBackend = (databaseUrl: string): Layer.Layer<StoreUnderTest, unknown> =>
  Layer.merge(
    layerSql.pipe(Layer.provide(emptyTables), Layer.provide(serverLayer(databaseUrl))),
    secondCopyOf(Layer.fresh(layerSql)).pipe(Layer.provide(serverLayer(databaseUrl)))
  )
