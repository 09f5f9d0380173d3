import { Schema } from "effect"

/** Annotations giving a setting's schema one message for the whole value, whatever part of the decoding failed. */
export const expecting = (expected: string) => ({ message: () => ({ message: expected, override: true }) })

/** A yes-or-no environment variable: `true`, `false`, `1` or `0`. */
export const Flag = Schema.transform(Schema.Literal("true", "false", "1", "0"), Schema.Boolean, {
  strict: true,
  decode: (value) => value === "true" || value === "1",
  encode: (value) => (value ? "true" : "false")
}).annotations(expecting("true or false"))

/** A whole number from `least` to `most`, written in decimal; `unit` names what is counted in the message. */
export const WholeNumber = (least: number, most: number, unit = "") =>
  Schema.NumberFromString.pipe(Schema.int(), Schema.between(least, most))
    .annotations(expecting(`a whole number${unit === "" ? "" : ` of ${unit}`} from ${least} to ${most}`))
