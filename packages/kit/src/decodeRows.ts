import { Schema } from "effect"
import type { Effect, ParseResult } from "effect"

type RowsDecoder = (rows: unknown) => Effect.Effect<ReadonlyArray<unknown>, ParseResult.ParseError>

const decoders = new WeakMap<object, RowsDecoder>()

/**
 * `Schema.decodeUnknown(Schema.Array(row))` for a query's rows, made once per row schema: each new array schema
 * compiles its parser again, which showed in the profiles of every service's hot statements.
 */
export const decodeRows = <A, I>(row: Schema.Schema<A, I>) => {
  let decode = decoders.get(row)
  if (decode === undefined) {
    decode = Schema.decodeUnknown(Schema.Array(row)) as RowsDecoder
    decoders.set(row, decode)
  }
  return decode as (rows: unknown) => Effect.Effect<ReadonlyArray<A>, ParseResult.ParseError>
}
