import { Schema } from "effect"

/** An int8 column or a `count(*)`: pg gives it as a string (a driver may give a bigint); the values stay safe integers. */
export const Int8 = Schema.transform(Schema.Union(Schema.Number, Schema.String, Schema.BigIntFromSelf), Schema.Number, {
  strict: true,
  decode: (value) => Number(value),
  encode: (value) => value
})
