import { ParseResult, Schema } from "effect"

/** A date and time with a zone: `Z` or an offset. */
const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/

const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** Why `text` cannot be stored: PostgreSQL text holds no NUL, and half a surrogate pair is not a character. */
export const unstorableTextProblem = (text: string): string | undefined =>
  text.includes("\u0000")
    ? "must not contain NUL characters (U+0000)"
    : UNPAIRED_SURROGATE.test(text)
    ? "must not contain unpaired surrogates"
    : undefined

/** Text that can be stored and sent on, of at most `maxLength` characters. */
export const StorableText = (maxLength: number) =>
  Schema.String.pipe(
    Schema.filter((text) => unstorableTextProblem(text) ?? true),
    Schema.filter((text) => text.length <= maxLength || `must be at most ${maxLength} characters`)
  )

/** Storable text with something other than spaces in it. */
export const NonBlankText = (maxLength: number) =>
  StorableText(maxLength).pipe(Schema.filter((text) => text.trim() !== "" || "must not be blank"))

/** An instant, written as ISO 8601 in UTC (`2024-03-01T12:00:00.000Z`); any ISO 8601 instant is read. */
export const Timestamp = Schema.transformOrFail(Schema.String, Schema.DateFromSelf, {
  strict: true,
  decode: (text, _, ast) => {
    const date = ISO_8601.test(text) ? new Date(text) : new Date(Number.NaN)
    if (Number.isNaN(date.getTime())) return ParseResult.fail(new ParseResult.Type(ast, text, "must be an ISO 8601 date and time"))
    // outside these years databases differ (PostgreSQL has no year 0) and no content change belongs
    const year = date.getUTCFullYear()
    return year < 1000 || year > 9999
      ? ParseResult.fail(new ParseResult.Type(ast, text, "must be a date between the years 1000 and 9999"))
      : ParseResult.succeed(date)
  },
  encode: (date) => ParseResult.succeed(date.toISOString())
}).annotations({ identifier: "Timestamp", description: "ISO 8601 instant, written in UTC" })
