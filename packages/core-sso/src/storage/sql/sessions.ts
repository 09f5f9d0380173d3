import { Effect, Option, Schema } from "effect"
import type { SsoStore } from "../SsoStore"
import { json, OptionalTimestamp, timestamp, Timestamp } from "./columns"
import { FAILED_ATTEMPT, HOLDERS_CHANNEL } from "./holders"
import type { SsoSqlTools } from "./tools"

const SessionRow = Schema.Struct({
  id_hash: Schema.String,
  user_uid: Schema.String,
  csrf_token: Schema.String,
  auth_time: Timestamp,
  last_seen_at: Timestamp,
  awaiting_second_step: Schema.Boolean
})

const AttemptsRow = Schema.Struct({ count: Schema.Number, oldest: OptionalTimestamp, latest: OptionalTimestamp })

type SessionMethods = Pick<
  SsoStore["Type"],
  "recordFailedAttempt" | "failedAttempts" | "insertSession" | "touchSession" | "deleteSession" | "deleteSessionsOf"
>

/**
 * Sign-in sessions, and the failed attempts the throttles count: every copy hears of a failure, so that a request
 * with none in its window need not count them.
 */
export const sessionMethods = ({ firstRow, memory, rows, sql, storeError }: SsoSqlTools): SessionMethods => ({
  recordFailedAttempt: (keys, at, forgetBefore) =>
    sql.withTransaction(Effect.gen(function*() {
      yield* sql`
        DELETE FROM sso.failed_attempts
        WHERE key IN (SELECT jsonb_array_elements_text(${json(keys)}::jsonb))
          AND at < ${timestamp(forgetBefore)}::timestamptz`
      yield* sql`
        INSERT INTO sso.failed_attempts (key, at)
        SELECT key, ${timestamp(at)}::timestamptz FROM jsonb_array_elements_text(${json(keys)}::jsonb) AS k(key)`
      yield* sql`SELECT pg_notify(${HOLDERS_CHANNEL}, ${`${FAILED_ATTEMPT}${at.getTime()}`})`
    })).pipe(
      Effect.tap(() => Effect.sync(() => memory.failures.heard(at.getTime()))),
      Effect.mapError(storeError("recordFailedAttempt"))
    ),
  failedAttempts: (keys, since) =>
    Effect.suspend(() => {
      if (memory.failures.noneSince(since.getTime())) return Effect.succeed(keys.map(() => ({ count: 0, oldest: null })))
      const withLatest = memory.failures.unknown
      return memory.failures.learnFrom(Effect.map(
        rows("failedAttempts", AttemptsRow, sql`
          SELECT count(f.at)::integer AS count, min(f.at) AS oldest,
            ${withLatest ? sql`(SELECT max(at) FROM sso.failed_attempts)` : sql`NULL::timestamptz`} AS latest
          FROM jsonb_array_elements_text(${json(keys)}::jsonb) WITH ORDINALITY AS k(key, position)
          LEFT JOIN sso.failed_attempts f ON f.key = k.key AND f.at > ${timestamp(since)}::timestamptz
          GROUP BY k.position ORDER BY k.position`),
        (found) => ({
          answer: found.map(({ count, oldest }) => ({ count, oldest })),
          latest: withLatest && found.length > 0 ? (found[0]!.latest?.getTime() ?? -Infinity) : undefined
        })
      ))
    }),

  insertSession: (session) =>
    sql`
      INSERT INTO sso.sessions (id_hash, user_uid, csrf_token, auth_time, last_seen_at, awaiting_second_step)
      VALUES (${session.idHash}, ${session.userUid}, ${session.csrfToken}, ${timestamp(session.authTime)}::timestamptz,
        ${timestamp(session.lastSeenAt)}::timestamptz, ${session.awaitingSecondStep})`.pipe(Effect.asVoid, Effect.mapError(storeError("insertSession"))),
  touchSession: (idHash, idleSince, now) =>
    Effect.map(
      firstRow("touchSession", SessionRow, sql`
        UPDATE sso.sessions SET last_seen_at = ${timestamp(now)}::timestamptz
        WHERE id_hash = ${idHash} AND last_seen_at > ${timestamp(idleSince)}::timestamptz
        RETURNING id_hash, user_uid, csrf_token, auth_time, last_seen_at, awaiting_second_step`),
      Option.map((row) => ({
        idHash: row.id_hash,
        userUid: row.user_uid,
        csrfToken: row.csrf_token,
        authTime: row.auth_time,
        lastSeenAt: row.last_seen_at,
        awaitingSecondStep: row.awaiting_second_step
      }))
    ),
  deleteSession: (idHash) =>
    sql`DELETE FROM sso.sessions WHERE id_hash = ${idHash}`.pipe(Effect.asVoid, Effect.mapError(storeError("deleteSession"))),
  deleteSessionsOf: (uid, options) =>
    sql`DELETE FROM sso.sessions WHERE user_uid = ${uid} AND id_hash <> ${options?.except ?? ""}`.pipe(Effect.asVoid, Effect.mapError(storeError("deleteSessionsOf")))
})
