import { Schema } from "effect"
import type { Effect, ParseResult } from "effect"

const decoders = new WeakMap<object, (rows: unknown) => Effect.Effect<ReadonlyArray<unknown>, ParseResult.ParseError>>()

/**
 * `Schema.decodeUnknown(Schema.Array(row))`, built once per row schema. Built at every query, each array schema was
 * new, so its parser was compiled again for every statement (it showed in profiles of delivery).
 */
export const decodeRows = <A, I>(row: Schema.Schema<A, I>) => {
  let decode = decoders.get(row)
  if (decode === undefined) {
    decode = Schema.decodeUnknown(Schema.Array(row)) as (rows: unknown) => Effect.Effect<ReadonlyArray<unknown>, ParseResult.ParseError>
    decoders.set(row, decode)
  }
  return decode as (rows: unknown) => Effect.Effect<ReadonlyArray<A>, ParseResult.ParseError>
}
