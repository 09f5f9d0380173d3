import { PgliteClient } from "@civicstack/sql-pglite"
import { createTestDatabase as createDatabase, emptyTables, testPool } from "@civicstack/kit/testing"
import { PgClient } from "@effect/sql-pg"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect, Layer } from "effect"
import { migrate } from "../../src/migrations/index"
import type { SsoStore } from "../../src/storage/SsoStore"
import { layerMemory } from "../../src/storage/memory"
import { layerSql } from "../../src/storage/sql"

export const memoryBackend = (): Layer.Layer<SsoStore> => layerMemory()

const ssoTables = emptyTables([
  "sso.signing_keys",
  "sso.push_credentials",
  "sso.events",
  "sso.sessions",
  "sso.failed_attempts",
  "sso.refresh_tokens",
  "sso.access_tokens",
  "sso.grants",
  "sso.permissions",
  "sso.recovery_codes",
  "sso.two_step",
  "sso.users",
  "sso.applications"
])

/** On the test file's shared PGlite database, listening as the server does, with every table emptied first. */
export const pgliteBackend = (
  database: Layer.Layer<SqlClient | PgliteClient.PgliteClient, unknown>
): Layer.Layer<SsoStore, unknown> =>
  Layer.unwrapEffect(Effect.map(PgliteClient.PgliteClient, ({ listen }) => layerSql({ listen }))).pipe(
    Layer.provide(ssoTables),
    Layer.provide(database)
  )

/** A database of its own with the sso schema migrated; `drop` removes it. */
export const createTestDatabase = (serverUrl: string) => createDatabase(serverUrl, "ssostore", migrate)

/** With LISTEN, as the server runs it, so that the suite checks the store's memory of token holders too. */
export const postgresBackend = (databaseUrl: string): Layer.Layer<SsoStore, unknown> =>
  Layer.unwrapEffect(Effect.map(PgClient.PgClient, ({ listen }) => layerSql({ listen }))).pipe(
    Layer.provide(ssoTables),
    Layer.provide(testPool(databaseUrl))
  )
