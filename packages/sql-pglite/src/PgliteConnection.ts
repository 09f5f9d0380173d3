import type { QueryOptions, Results } from "@electric-sql/pglite"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { encodeParameter } from "./parameters"
import type { PgliteWorker } from "./PgliteWorker"
import type { SessionAccess } from "./Session"

type TransformRows = (<A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined

/** Rows fetched per round trip when streaming through a cursor, as `@effect/sql-pg` does. */
const cursorBatchSize = 128

/**
 * A cursor only takes a plain query; statements that change data, SELECT INTO
 * and row locks (not allowed in a WITH HOLD cursor) are run whole instead.
 */
const cursorQuery = /^\s*\(*\s*(?:select|values|table|with)\b/i
const notForCursor = /\b(?:insert|update|delete|merge|into|share)\b/i
const canStreamWithCursor = (sql: string): boolean => cursorQuery.test(sql) && !notForCursor.test(sql)

const describeCause = (cause: unknown): string => cause instanceof Error ? cause.message : String(cause)

/**
 * Like node-postgres: the results of one statement, or of each statement when
 * text without parameters holds several.
 */
const perStatement = <A>(results: ReadonlyArray<Results>, select: (result: Results) => A): A | Array<A> =>
  results.length === 1 ? select(results[0]!) : results.map(select)

/**
 * Sends a statement and returns its answer without waiting for it: the session is handed on once the statement is
 * sent, since the database runs what it is sent in order. The answer is marked handled at once, so that one whose
 * caller was interrupted before awaiting it is not an unhandled rejection.
 */
const startSending = <A>(send: () => Promise<A>): Promise<A> => {
  let answer: Promise<A>
  try {
    answer = send()
  } catch (error) {
    answer = Promise.reject(error)
  }
  answer.catch(() => {})
  return answer
}

/** What every connection of one client shares. */
export interface Driver {
  readonly database: PgliteWorker
  readonly nextCursorName: () => string
}

export const makeConnection = (
  { database, nextCursorName }: Driver,
  withSession: SessionAccess
): Connection => {
  /**
   * Without parameters the text goes through the simple query protocol (which
   * takes several statements), as node-postgres does; with parameters through
   * the extended protocol.
   */
  const run = (
    sql: string,
    params: ReadonlyArray<unknown>,
    options?: QueryOptions
  ): Effect.Effect<ReadonlyArray<Results>, SqlError> =>
    withSession(Effect.sync(() =>
      startSending(() =>
        params.length === 0 ? database.exec(sql, options) : database.query(sql, params.map(encodeParameter), options)
      )
    )).pipe(Effect.flatMap((answer) =>
      Effect.tryPromise({
        try: () => answer,
        catch: (cause) => new SqlError({ cause, message: `Failed to execute statement: ${describeCause(cause)}` })
      })
    ))

  const execute = (sql: string, params: ReadonlyArray<unknown>, transformRows: TransformRows) =>
    Effect.map(run(sql, params), (results) => {
      const rows = perStatement(results, (result) => result.rows)
      return transformRows ? transformRows(rows) : rows
    })

  const streamWithCursor = (sql: string, params: ReadonlyArray<unknown>, transformRows: TransformRows) =>
    Effect.gen(function*() {
      const cursor = `"${nextCursorName()}"`
      // WITH HOLD: the cursor outlives the statement's implicit transaction, so
      // the session is free between fetches.
      yield* Effect.acquireRelease(
        run(`DECLARE ${cursor} NO SCROLL CURSOR WITH HOLD FOR ${sql}`, params),
        () => Effect.ignore(run(`CLOSE ${cursor}`, []))
      )
      const fetch = run(`FETCH FORWARD ${cursorBatchSize} FROM ${cursor}`, []).pipe(
        Effect.mapError(Option.some),
        Effect.flatMap((results) => {
          const rows = results[0]?.rows ?? []
          return rows.length === 0
            ? Effect.fail(Option.none())
            : Effect.succeed(Chunk.unsafeFromArray(transformRows ? transformRows(rows) : rows))
        })
      )
      return Stream.repeatEffectChunkOption(fetch)
    }).pipe(Stream.unwrapScoped)

  return {
    execute,
    executeUnprepared: execute,
    executeRaw: (sql, params) => Effect.map(run(sql, params), (results) => perStatement(results, (result) => result)),
    executeValues: (sql, params) =>
      Effect.map(run(sql, params, { rowMode: "array" }), (results) =>
        perStatement(results, (result) => result.rows as unknown as ReadonlyArray<ReadonlyArray<unknown>>)),
    executeStream: (sql, params, transformRows) =>
      canStreamWithCursor(sql)
        ? streamWithCursor(sql, params, transformRows)
        : Stream.fromIterableEffect(execute(sql, params, transformRows))
  }
}
