import { PgliteClient } from "@civicstack/sql-pglite"
import type { SqlClient } from "@effect/sql/SqlClient"
import { afterAll, beforeAll } from "@effect/vitest"
import type { Context } from "effect"
import { Effect, Exit, Layer, Scope } from "effect"
import { migrate } from "../src/index"

/**
 * One migrated in-memory PGlite database for the calling test file (starting PGlite takes seconds), closed after its
 * tests; the returned function gives it once `beforeAll` has run.
 */
export const pgliteForFile = () => {
  let scope: Scope.CloseableScope
  let database: Context.Context<PgliteClient.PgliteClient | SqlClient> | undefined
  beforeAll(async () => {
    scope = await Effect.runPromise(Scope.make())
    database = await Effect.runPromise(
      Layer.buildWithScope(PgliteClient.layer({}), scope).pipe(Effect.tap((context) => Effect.provide(migrate, context)))
    )
  }, 120_000)
  afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))
  return () => {
    if (database === undefined) throw new Error("the PGlite database is opened in beforeAll")
    return database
  }
}
