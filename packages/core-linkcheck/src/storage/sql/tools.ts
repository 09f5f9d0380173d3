import { sqlStoreTools } from "@civicstack/kit"
import { TransactionConnection } from "@effect/sql/SqlClient"
import { Effect, Option } from "effect"
import { BATCH_COLUMNS, CHECK_COLUMNS, sha256Of } from "./rows"

/** The kit's SQL store tools, with what the linkcheck statements add to them. */
export const linkcheckSqlTools = Effect.map(sqlStoreTools("linkcheck store"), (tools) => {
  const { sql, transaction } = tools

  /** In a transaction of its own, or in the caller's without a savepoint: one round trip less each way. */
  const atomically = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.flatMap(
      Effect.serviceOption(TransactionConnection),
      (caller) => Option.isSome(caller) ? effect : transaction(effect)
    )

  return {
    ...tools,
    atomically,
    checkColumns: sql.literal(CHECK_COLUMNS),
    batchColumns: sql.literal(BATCH_COLUMNS),
    sha256: (column: string) => sql.literal(sha256Of(column)),
    sha256Param: (text: string) => sql`sha256(convert_to(${text}::text, 'UTF8'))`
  }
})

export type LinkcheckSqlTools = Effect.Effect.Success<typeof linkcheckSqlTools>
