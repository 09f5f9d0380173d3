import { PgliteClient } from "@civicstack/sql-pglite"
import { afterAll, beforeAll, describe } from "@effect/vitest"
import { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Layer, ManagedRuntime } from "effect"
import { createTestDatabase } from "./postgres"

/** Empties the tables (naming their schema) before the layer that needs it, so that each test starts afresh. */
export const emptyTables = (tables: ReadonlyArray<string>) =>
  Layer.effectDiscard(Effect.flatMap(SqlClient, (sql) => sql.unsafe(`TRUNCATE ${tables.join(", ")} RESTART IDENTITY CASCADE`)))

/**
 * One in-memory PGlite database for a whole test file, migrated once (opening PGlite takes seconds). `database` gives
 * its client, with `PgliteClient` for a store that listens.
 */
export const sharedPglite = <E>(migrate: Effect.Effect<void, E, SqlClient>) => {
  const runtime = ManagedRuntime.make(Layer.provideMerge(Layer.effectDiscard(migrate), PgliteClient.layer({})))
  const database: Layer.Layer<SqlClient | PgliteClient.PgliteClient, unknown> = Layer.unwrapEffect(
    Effect.map(runtime.runtimeEffect, (built) => Layer.succeedContext(built.context))
  )
  return { open: () => runtime.runtime(), close: () => runtime.dispose(), database }
}

/** A storage suite: registers its tests over the backend the function gives for each test. */
export type StorageSuite<Backend> = (name: string, backend: () => Backend) => void

/** Runs `suite` on one shared PGlite database per test file, migrated by `migrate`. */
export const suiteOnPglite = <Backend, E>(
  migrate: Effect.Effect<void, E, SqlClient>,
  backend: (database: Layer.Layer<SqlClient | PgliteClient.PgliteClient, unknown>) => Backend,
  suite: StorageSuite<Backend>
) => {
  const pglite = sharedPglite(migrate)
  beforeAll(pglite.open)
  afterAll(pglite.close)
  suite("PGlite", () => backend(pglite.database))
}

/**
 * Runs `suite` on a database of its own on the PostgreSQL server of `TEST_DATABASE_URL` (skipped without it),
 * migrated by `migrate` and dropped afterwards; `backend` gets the database's URL.
 */
export const suiteOnPostgres = <Backend>(
  prefix: string,
  migrate: Effect.Effect<void, SqlError | unknown, SqlClient>,
  backend: (databaseUrl: string) => Backend,
  suite: StorageSuite<Backend>
) => {
  const serverUrl = process.env["TEST_DATABASE_URL"]
  describe.skipIf(serverUrl === undefined)("PostgreSQL", () => {
    let database: Awaited<ReturnType<typeof createTestDatabase>> | undefined
    beforeAll(async () => {
      database = await createTestDatabase(serverUrl!, prefix, migrate)
    })
    afterAll(() => database?.drop())
    suite("PostgreSQL", () => backend(database!.url))
  })
}

