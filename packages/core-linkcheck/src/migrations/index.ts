import * as Migrator from "@effect/sql/Migrator"
import { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { createLinkcheckTables, indexWaitingChecksByHost } from "./createLinkcheckTables"

/** Any constant shared by every copy: serialises concurrent `migrate` runs on one database. */
const MIGRATION_LOCK_KEY = 5_463_118_920

const runMigrations = Migrator.make({})({
  loader: Migrator.fromRecord({
    "1_create_linkcheck": createLinkcheckTables,
    "2_index_waiting_checks_by_host": indexWaitingChecksByHost
  }),
  table: "linkcheck.migrations"
})

/** Creates the `linkcheck` schema and brings its tables up to date; safe to run from several copies at once. */
export const migrate: Effect.Effect<void, Migrator.MigrationError | SqlError, SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient
  yield* sql.withTransaction(Effect.gen(function*() {
    yield* sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`
    yield* sql`CREATE SCHEMA IF NOT EXISTS linkcheck`
    // created here (the Migrator would too) so that its existence check cannot fail inside this transaction
    yield* sql`CREATE TABLE IF NOT EXISTS linkcheck.migrations (
      migration_id integer PRIMARY KEY,
      created_at timestamptz NOT NULL DEFAULT now(),
      name text NOT NULL
    )`
    yield* runMigrations
  }))
})
