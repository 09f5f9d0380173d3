import { sqlStoreTools } from "@civicstack/kit"
import { TransactionConnection } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Duration, Effect, FiberRef, Option } from "effect"
import { AlreadyTaken } from "../SsoStore"
import type { StoreError } from "../SsoStore"
import { HOLDERS_CHANGED, HOLDERS_CHANNEL, holdersChangedInTransaction } from "./holders"
import { makeReadMemory } from "./readMemory"

const UNIQUE_FIELDS: Record<string, AlreadyTaken["field"]> = {
  applications_name_key: "name",
  applications_client_id_hash_key: "client_id",
  users_by_email: "email"
}

/** A unique index refused the row: which of our unique fields it was, if any. */
export const takenField = (error: SqlError): AlreadyTaken["field"] | undefined => {
  const cause = error.cause as { readonly code?: unknown; readonly constraint?: unknown } | undefined
  return cause?.code === "23505" && typeof cause.constraint === "string" ? UNIQUE_FIELDS[cause.constraint] : undefined
}

/**
 * What every part of the SQL store works with: the kit's SQL tools, whose transactions here also make the memory of
 * token holders forget what a committed change may have altered, and that memory itself.
 */
export const makeSsoSqlTools = Effect.gen(function*() {
  const tools = yield* sqlStoreTools("sso store")
  const { sql, storeError } = tools
  const memory = makeReadMemory({ maxAge: Duration.minutes(1) })

  const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | StoreError, R> =>
    tools.transaction(effect).pipe(
      // a read between the change and the commit may have kept the holder as it was before
      Effect.ensuring(Effect.flatMap(FiberRef.get(holdersChangedInTransaction), (changed) =>
        changed ? Effect.sync(memory.invalidate) : Effect.void)),
      Effect.locally(holdersChangedInTransaction, false)
    )

  const atomically = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | StoreError, R> =>
    Effect.flatMap(Effect.serviceOption(TransactionConnection), (caller) => Option.isSome(caller) ? effect : transaction(effect))

  /** A write whose unique index may refuse the row: `AlreadyTaken` naming the field. */
  const write = (operation: string, query: Effect.Effect<unknown, SqlError>) =>
    query.pipe(
      Effect.asVoid,
      Effect.catchAll((error): Effect.Effect<void, AlreadyTaken | StoreError> => {
        const field = takenField(error)
        return field === undefined ? Effect.fail(storeError(operation)(error)) : Effect.fail(new AlreadyTaken({ field }))
      })
    )

  /** Tells every copy, this one at once and the others when it commits, to forget the token holders they keep. */
  const announceHoldersChanged = Effect.zipRight(
    Effect.zipRight(Effect.sync(memory.invalidate), FiberRef.set(holdersChangedInTransaction, true)),
    Effect.mapError(sql`SELECT pg_notify(${HOLDERS_CHANNEL}, ${HOLDERS_CHANGED})`, storeError("announceHoldersChanged"))
  )

  /** A change that can alter `tokenHolder` answers: it and its announcement are kept or lost together. */
  const changingHolders = <Args extends ReadonlyArray<unknown>, A, E>(change: (...args: Args) => Effect.Effect<A, E>) =>
  (...args: Args): Effect.Effect<A, E | StoreError> => atomically(Effect.tap(change(...args), () => announceHoldersChanged))

  return { ...tools, transaction, atomically, write, changingHolders, memory }
})

export type SsoSqlTools = Effect.Effect.Success<typeof makeSsoSqlTools>
