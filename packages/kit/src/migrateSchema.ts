import * as Migrator from "@effect/sql/Migrator"
import { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"

export interface SchemaMigrations {
  /** The PostgreSQL schema the package owns; its migrations are recorded in `<schema>.migrations`. */
  readonly schema: string
  /** Any constant of the package's own, the same in every copy: serialises concurrent runs on one database. */
  readonly lockKey: number
  /** By name `<id>_<description>`, applied in id order, each once. */
  readonly migrations: Record<string, Effect.Effect<unknown, SqlError, SqlClient>>
}

/**
 * The `migrate` of a package that owns a schema (jobs, and each core): creates the schema and applies the pending
 * migrations in one transaction under an advisory lock, so several copies starting at once are safe.
 */
export const migrateSchema = (
  { lockKey, migrations, schema }: SchemaMigrations
): Effect.Effect<void, Migrator.MigrationError | SqlError, SqlClient> => {
  const runMigrations = Migrator.make({})({
    loader: Migrator.fromRecord(migrations),
    table: `${schema}.migrations`
  })
  return Effect.gen(function*() {
    const sql = yield* SqlClient
    yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql`SELECT pg_advisory_xact_lock(${lockKey})`
      yield* sql`CREATE SCHEMA IF NOT EXISTS ${sql(schema)}`
      // created here (the Migrator would too) so that its existence check cannot fail inside this transaction
      yield* sql`CREATE TABLE IF NOT EXISTS ${sql(schema)}.migrations (
        migration_id integer PRIMARY KEY,
        created_at timestamptz NOT NULL DEFAULT now(),
        name text NOT NULL
      )`
      yield* runMigrations
    }))
  })
}
