import { Schema } from "effect"

/** RFC 3339 UTC to the second, as the public service writes it: `2017-04-12T18:47:16Z`. */
export const wireTimestamp = (date: Date): string => date.toISOString().replace(/\.\d{3}Z$/, "Z")

/** `wireTimestamp` on the wire. */
export const Timestamp = Schema.transform(Schema.String, Schema.DateFromSelf, {
  strict: true,
  decode: (text) => new Date(text),
  encode: wireTimestamp
}).annotations({ identifier: "Timestamp", description: "RFC 3339 UTC timestamp, to the second" })

export const LinkStatus = Schema.Literal("pending", "ok", "caution", "broken").annotations({ identifier: "LinkStatus" })
export type LinkStatus = typeof LinkStatus.Type

/** The result of checking one link. Keys are declared in the order they appear on the wire. */
export const LinkReport = Schema.Struct({
  uri: Schema.String,
  status: LinkStatus,
  checked: Schema.NullOr(Timestamp),
  problem_summary: Schema.NullOr(Schema.String),
  errors: Schema.Array(Schema.String),
  warnings: Schema.Array(Schema.String),
  danger: Schema.Array(Schema.String),
  suggested_fix: Schema.NullOr(Schema.String)
}).annotations({ identifier: "LinkReport" })
export type LinkReport = typeof LinkReport.Type

export const BatchStatus = Schema.Literal("in_progress", "completed").annotations({ identifier: "BatchStatus" })

export const BatchTotals = Schema.Struct({
  links: Schema.Int,
  ok: Schema.Int,
  caution: Schema.Int,
  broken: Schema.Int,
  pending: Schema.Int,
  danger: Schema.Int
}).annotations({ identifier: "BatchTotals" })
export type BatchTotals = typeof BatchTotals.Type

export const BatchReport = Schema.Struct({
  id: Schema.Int,
  status: BatchStatus,
  links: Schema.Array(LinkReport),
  totals: BatchTotals,
  completed_at: Schema.NullOr(Timestamp)
}).annotations({ identifier: "BatchReport" })
export type BatchReport = typeof BatchReport.Type
