import { Effect, Schema } from "effect"
import type { SsoEvent } from "../../domain/records"
import type { SsoStore } from "../SsoStore"
import { json, storable, timestamp, Timestamp } from "./columns"
import type { SsoSqlTools } from "./tools"

const EventRow = Schema.Struct({
  at: Timestamp,
  kind: Schema.String,
  user_uid: Schema.NullOr(Schema.String),
  application_id: Schema.NullOr(Schema.String),
  detail: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})

/** The event log, newest first. */
export const eventMethods = ({ rows, sql, storeError }: SsoSqlTools): Pick<SsoStore["Type"], "appendEvent" | "events"> => ({
  appendEvent: (event) =>
    sql`
      INSERT INTO sso.events (at, kind, user_uid, application_id, detail)
      VALUES (${timestamp(event.at)}::timestamptz, ${event.kind}, ${event.userUid}, ${event.applicationId},
        ${json(event.detail)}::jsonb)`.pipe(Effect.asVoid, Effect.mapError(storeError("appendEvent"))),
  events: ({ kind, limit, since, until, userUid }) =>
    [userUid, kind].some((text) => text !== undefined && !storable(text)) ? Effect.succeed([]) : Effect.map(
      rows("events", EventRow, sql`
        SELECT at, kind, user_uid, application_id, detail FROM sso.events
        WHERE ${userUid === undefined ? sql`true` : sql`user_uid = ${userUid}`}
          AND ${kind === undefined ? sql`true` : sql`kind = ${kind}`}
          AND ${since === undefined ? sql`true` : sql`at >= ${timestamp(since)}::timestamptz`}
          AND ${until === undefined ? sql`true` : sql`at < ${timestamp(until)}::timestamptz`}
        ORDER BY at DESC, id DESC LIMIT ${limit}`),
      (found): ReadonlyArray<SsoEvent> =>
        found.map((row) => ({
          at: row.at,
          kind: row.kind,
          userUid: row.user_uid,
          applicationId: row.application_id,
          detail: row.detail
        }))
    )
})
