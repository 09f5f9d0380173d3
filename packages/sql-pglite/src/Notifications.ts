import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { escapeIdentifier } from "pg"
import type { PgliteWorker } from "./PgliteWorker"

export interface Notifications {
  readonly listen: (channel: string) => Stream.Stream<string, SqlError>
  readonly notify: (channel: string, payload: string) => Effect.Effect<void, SqlError>
}

/**
 * LISTEN/NOTIFY on the one PGlite session. Statements go through `sql`, so
 * they take their turn on the session (or run inside the caller's
 * transaction). The session stays subscribed to a channel while at least one
 * stream listens to it.
 */
export const makeNotifications = (database: PgliteWorker, sql: SqlClient.SqlClient): Notifications => {
  const listeners = new Map<string, number>()
  const countListeners = (channel: string, change: number): number => {
    const count = (listeners.get(channel) ?? 0) + change
    if (count === 0) listeners.delete(channel)
    else listeners.set(channel, count)
    return count
  }
  const run = (statement: string) => Effect.asVoid(sql.unsafe(statement).withoutTransform)
  const listenTo = (channel: string) => run(`LISTEN ${escapeIdentifier(channel)}`)

  const subscribe = (channel: string) =>
    Effect.suspend(() => {
      countListeners(channel, 1)
      return Effect.tapError(listenTo(channel), () => Effect.sync(() => countListeners(channel, -1)))
    })

  const unsubscribe = (channel: string) =>
    Effect.suspend(() => {
      if (countListeners(channel, -1) > 0) return Effect.void
      return run(`UNLISTEN ${escapeIdentifier(channel)}`).pipe(
        // A stream may have subscribed while UNLISTEN waited for the session.
        Effect.zipRight(Effect.suspend(() => listeners.has(channel) ? listenTo(channel) : Effect.void)),
        Effect.ignore
      )
    })

  return {
    // Like @effect/sql-pg, notifications without a payload are not emitted.
    listen: (channel) =>
      Stream.asyncPush<string, SqlError>((emit) =>
        Effect.gen(function*() {
          const stopReceiving = database.onNotification((from, payload) => {
            if (from === channel && payload) emit.single(payload)
          })
          yield* Effect.addFinalizer(() => Effect.sync(stopReceiving))
          yield* Effect.acquireRelease(subscribe(channel), () => unsubscribe(channel))
        })
      ),
    notify: (channel, payload) => Effect.asVoid(sql`SELECT pg_notify(${channel}, ${payload})`.withoutTransform)
  }
}
