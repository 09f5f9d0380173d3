import { Schema } from "effect"
import type { CheckRecord, Webhook } from "../../domain/check"

/** What the statements of every record family share: the check and batch rows, their columns, and their values. */

export const Priority = Schema.transform(Schema.Literal(0, 1), Schema.Literal("low", "high"), {
  strict: true,
  decode: (stored) => (stored === 1 ? "high" as const : "low" as const),
  encode: (priority) => (priority === "high" ? 1 as const : 0 as const)
})
export const storedPriority = Schema.encodeSync(Priority)

const Messages = Schema.NullOr(Schema.Array(Schema.String))

export const CheckRow = Schema.Struct({
  id: Schema.String,
  uri: Schema.String,
  priority: Priority,
  created_at: Schema.DateFromSelf,
  completed_at: Schema.NullOr(Schema.DateFromSelf),
  status: Schema.NullOr(Schema.Literal("ok", "caution", "broken")),
  errors: Messages,
  warnings: Messages,
  danger: Messages,
  problem_summary: Schema.NullOr(Schema.String),
  suggested_fix: Schema.NullOr(Schema.String),
  anchors: Messages
})
export type CheckRow = typeof CheckRow.Type

export const BatchRow = Schema.Struct({
  id: Schema.NumberFromString,
  created_at: Schema.DateFromSelf,
  completed_at: Schema.NullOr(Schema.DateFromSelf),
  webhook_uri: Schema.NullOr(Schema.String),
  webhook_secret_token: Schema.NullOr(Schema.String),
  owner: Schema.NullOr(Schema.String),
  trace_parent: Schema.NullOr(Schema.String),
  check_fragments: Schema.Boolean,
  has_fragment_links: Schema.Boolean
})

const CHECK_FIELDS = `c.id::text AS id, c.uri, c.priority, c.created_at, c.completed_at, c.status, c.errors,
  c.warnings, c.danger, c.problem_summary, c.suggested_fix`

export const CHECK_COLUMNS = `${CHECK_FIELDS}, c.anchors`

/** For rows of many links: a page's anchors are read once (see `findBatch`), not once per link. */
export const CHECK_COLUMNS_BUT_ANCHORS = `${CHECK_FIELDS}, NULL::jsonb AS anchors`

export const BATCH_COLUMNS = `b.id::text AS id, b.created_at, b.completed_at, b.webhook_uri, b.webhook_secret_token, b.owner,
  b.trace_parent, b.check_fragments, b.has_fragment_links`

/** A check id that the database can compare with a bigint; any other string names no check. */
export const isCheckId = (id: string) => /^[1-9]\d{0,17}$/.test(id)

export const isBatchId = (id: number) => Number.isSafeInteger(id) && id > 0

export const timestamp = (date: Date) => date.toISOString()

/**
 * Rows written by one statement of a batch at most. PGlite runs each statement on the server's thread, so a batch's
 * thousands of rows go in several statements, between which its first checks' requests can go out.
 */
export const ROWS_PER_STATEMENT = 1000

/**
 * Checks are indexed by the SHA-256 of their uri and host, as a btree entry cannot hold a long text: this is the SQL
 * of that hash of a text column. Lookups by uri compare the uri too, so a collision cannot find another uri's check.
 */
export const sha256Of = (column: string) => `sha256(convert_to(${column}, 'UTF8'))`

export const checkRecordOf = (row: CheckRow): CheckRecord => ({
  id: row.id,
  uri: row.uri,
  priority: row.priority,
  createdAt: row.created_at,
  completedAt: row.completed_at,
  result: row.status === null ? null : {
    status: row.status,
    errors: row.errors ?? [],
    warnings: row.warnings ?? [],
    danger: row.danger ?? [],
    problemSummary: row.problem_summary,
    suggestedFix: row.suggested_fix
  },
  anchors: row.anchors
})

export const webhookOf = (uri: string | null, secretToken: string | null): Webhook | null =>
  uri === null ? null : { uri, secretToken }

