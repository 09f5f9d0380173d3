import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * n subscribers (ids 1..n) and one active `immediately` subscription each to `listId`, written set-based straight
 * into the `alerts` schema the server migrated; the identity sequence is moved past them so the server's own inserts
 * do not collide.
 */
export const seedSubscribers = (listId: number, subscribers: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      INSERT INTO alerts.subscribers (id, address, created_at, updated_at)
      SELECT i, 'subscriber' || i || '@bench.example', now(), now() FROM generate_series(1, ${subscribers}::int) AS i`
    yield* sql`SELECT setval(pg_get_serial_sequence('alerts.subscribers', 'id'), ${subscribers}::bigint)`
    yield* sql`
      INSERT INTO alerts.subscriptions (id, subscriber_id, subscriber_list_id, frequency, source, created_at, updated_at)
      SELECT gen_random_uuid(), i, ${listId}::bigint, 'immediately', 'imported', now(), now()
      FROM generate_series(1, ${subscribers}::int) AS i`
    yield* sql`ANALYZE alerts.subscribers`
    yield* sql`ANALYZE alerts.subscriptions`
  })

/** One more active `immediately` subscription, to `listId`, for each of the subscribers 1..count. */
export const seedSubscriptions = (listId: number, count: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      INSERT INTO alerts.subscriptions (id, subscriber_id, subscriber_list_id, frequency, source, created_at, updated_at)
      SELECT gen_random_uuid(), i, ${listId}::bigint, 'immediately', 'imported', now(), now()
      FROM generate_series(1, ${count}::int) AS i`
    yield* sql`ANALYZE alerts.subscriptions`
  })

export interface RawEmailShape {
  readonly subject: string
  /** Put before and after each row's own unsubscribe link, as fan-out composes an email. */
  readonly bodyBefore: string
  readonly bodyAfter: string
  readonly unsubscribeUrlPrefix: string
}

/**
 * The ceiling fan-out is compared with: n rows of the shape of `alerts.emails` (a copy of the table with its indexes,
 * `LIKE ... INCLUDING ALL`) written by one `INSERT ... SELECT generate_series`, with no join, no grouping and no
 * second table. As fan-out writes them, the rows hold their unsubscribe line and no subject or body (the notification's
 * content is stored once, elsewhere). Returns its wall time in milliseconds and the length of the bodies the rows
 * stand for; the copy is dropped afterwards.
 */
export const rawInsertMillis = (rows: number, shape: RawEmailShape) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`DROP TABLE IF EXISTS alerts.bench_raw_emails`
    yield* sql`CREATE TABLE alerts.bench_raw_emails (LIKE alerts.emails INCLUDING ALL)`
    const startedAt = Date.now()
    yield* sql`
      INSERT INTO alerts.bench_raw_emails (id, address, unsubscribe_lines, status, attempts, next_attempt_at,
        notification_id, subscriber_id, created_at, updated_at)
      SELECT gen_random_uuid(), 'subscriber' || i || '@bench.example',
        '[Unsubscribe from Bench list](' || ${shape.unsubscribeUrlPrefix}::text || gen_random_uuid()::text || ')',
        'pending', 0, now(), '00000000-0000-4000-8000-000000000000'::uuid, i, now(), now()
      FROM generate_series(1, ${rows}::int) AS i`
    const millis = Date.now() - startedAt
    const [row] = yield* sql<{ readonly length: number }>`
      SELECT (length(${shape.bodyBefore}::text) + avg(length(unsubscribe_lines)) + length(${shape.bodyAfter}::text))::float8
        AS length
      FROM alerts.bench_raw_emails`
    yield* sql`DROP TABLE alerts.bench_raw_emails`
    return { millis, averageBodyLength: row?.length ?? 0 }
  })

/**
 * What the fan-out of the notifications with `subject` wrote, read afterwards: emails, their average body length (the
 * shared content around each email's unsubscribe lines), sent.
 */
export const fanOutFigures = (subject: string) => Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* sql<{ readonly emails: number; readonly length: number | null; readonly sent: number }>`
    SELECT count(*)::float8 AS emails,
      avg(COALESCE(length(e.body), length(c.body_before) + length(e.unsubscribe_lines) + length(c.body_after)))::float8
        AS length,
      (count(*) FILTER (WHERE e.status = 'sent'))::float8 AS sent
    FROM alerts.emails e JOIN alerts.notifications n ON n.id = e.notification_id
      LEFT JOIN alerts.notification_contents c ON c.notification_id = e.notification_id
    WHERE n.subject = ${subject}`
  return { emails: row?.emails ?? 0, averageBodyLength: row?.length ?? 0, sent: row?.sent ?? 0 }
})
