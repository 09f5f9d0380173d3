import { SqlClient, TransactionConnection } from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { Effect, Option } from "effect"
import type { Schema } from "effect"
import { decodeRows } from "./decodeRows"
import { storeFailure, type StoreError } from "./store"

/** Carries the caller's failure out of the transaction (rolling it back), told apart from the database's. */
class CallerFailure<E> {
  constructor(readonly error: E) {}
}

type Query = Effect.Effect<ReadonlyArray<unknown>, SqlError>

/**
 * What every SQL store of a core does around its statements, failing with the store's `StoreError`: decoding rows,
 * and transactions that give the caller's own failures back as they were.
 */
export const sqlStoreTools = (store: string) =>
  Effect.map(SqlClient, (sql) => {
    const storeError = storeFailure(store)

    /** Runs a query, decoding its rows; database and decoding failures become a `StoreError`. */
    const rows = <A, I>(operation: string, schema: Schema.Schema<A, I>, query: Query) =>
      query.pipe(Effect.flatMap(decodeRows(schema)), Effect.mapError(storeError(operation)))

    const firstRow = <A, I>(operation: string, schema: Schema.Schema<A, I>, query: Query) =>
      Effect.map(rows(operation, schema, query), (found) => Option.fromNullable(found[0]))

    /** The effect in a transaction; its own failures roll it back and come out as they were. */
    const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | StoreError, R> =>
      sql.withTransaction(Effect.mapError(effect, (error) => new CallerFailure(error))).pipe(
        Effect.catchAllDefect((defect) => defect instanceof SqlError ? Effect.fail(defect) : Effect.die(defect)),
        Effect.mapError((failure): E | StoreError =>
          failure instanceof CallerFailure ? failure.error : storeError("transaction")(failure)
        )
      )

    /** In the caller's transaction when there is one (no savepoint: one round trip less each way), else in its own. */
    const atomically = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | StoreError, R> =>
      Effect.flatMap(Effect.serviceOption(TransactionConnection), (caller) => Option.isSome(caller) ? effect : transaction(effect))

    return { sql, storeError, rows, firstRow, transaction, atomically }
  })
