import { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"

/** A migration made of SQL statements run one after another (PGlite's `query` takes one statement at a time). */
export const statements = (...texts: ReadonlyArray<string>) =>
  Effect.flatMap(SqlClient, (sql) => Effect.forEach(texts, (text) => sql.unsafe(text), { discard: true }))
