import { Schema } from "effect"

export const MAX_BATCH_SIZE = 5000
export const DEFAULT_CHECKED_WITHIN_SECONDS = 14_400

/** Ten years: further back than any check is kept, and within the dates the database and JavaScript can hold. */
export const MAX_CHECKED_WITHIN_SECONDS = 315_360_000

const secondsProblem = `must be a whole number of seconds from 0 to ${MAX_CHECKED_WITHIN_SECONDS} (ten years)`

const SecondsFromString = Schema.NumberFromString.pipe(
  Schema.int(),
  Schema.between(0, MAX_CHECKED_WITHIN_SECONDS)
).annotations({ message: () => secondsProblem })

const Seconds = Schema.Number.pipe(Schema.int(), Schema.between(0, MAX_CHECKED_WITHIN_SECONDS)).annotations({
  message: () => secondsProblem
})

/** A filter rather than a union of two literals, so that a wrong value gets one message rather than one per literal. */
const BooleanFromString = Schema.transform(
  Schema.String.pipe(Schema.filter((text) => text === "true" || text === "false", {
    message: () => "must be true or false",
    jsonSchema: { enum: ["true", "false"] }
  })),
  Schema.Boolean,
  { strict: true, decode: (text) => text === "true", encode: (flag) => (flag ? "true" : "false") }
)

const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/**
 * Why a text cannot be stored and sent on, if it cannot: a NUL character (PostgreSQL text cannot hold one) or half of
 * a surrogate pair (not a character at all; JSON escapes such as `"\ud800"` produce one).
 */
const storageProblem = (text: string): string | undefined =>
  text.includes("\u0000")
    ? "must not contain NUL characters (U+0000)"
    : UNPAIRED_SURROGATE.test(text)
    ? "must not contain unpaired surrogates (a \\uD800-\\uDFFF escape without its other half)"
    : undefined

const storable = (text: Schema.Schema<string>) => text.pipe(Schema.filter((value) => storageProblem(value) ?? true))

const StorableString = storable(Schema.String)

const NonBlank = StorableString.pipe(
  Schema.filter((text) => text.trim() !== "", { message: () => "must not be blank" })
)

/** `GET /check` query. A uri that is not a valid URL is not a request error: it is checked and reported broken. */
export const CheckParams = Schema.Struct({
  uri: NonBlank,
  checked_within: Schema.optionalWith(SecondsFromString, { default: () => DEFAULT_CHECKED_WITHIN_SECONDS }),
  synchronous: Schema.optionalWith(BooleanFromString, { default: () => false }),
  /** Look the uri's `#fragment` up on its HTML page; the service's setting when not given. */
  check_fragments: Schema.optionalWith(BooleanFromString, { exact: true })
})
export type CheckParams = typeof CheckParams.Type

export const Priority = Schema.Literal("high", "low").annotations({ message: () => "must be high or low" })
export type Priority = typeof Priority.Type

const WebhookUri = StorableString.pipe(
  Schema.filter((text) => URL.canParse(text) && /^https?:$/.test(new URL(text).protocol), {
    message: () => "must be an absolute http or https URL"
  })
)

/**
 * Empty strings in `uris` are dropped before the size rules apply. The uris are checked in one filter over the array
 * rather than one per uri: a first request's 5000 uris then take milliseconds to decode, not tens of them.
 */
const Uris = Schema.transform(
  Schema.Array(Schema.String.annotations({ message: () => "must be an array of strings" })).pipe(
    Schema.filter((uris) => {
      for (let index = 0; index < uris.length; index++) {
        const problem = storageProblem(uris[index]!)
        if (problem !== undefined) return { path: [index], message: problem }
      }
      return true
    })
  ),
  Schema.Array(Schema.String),
  { strict: true, decode: (uris) => uris.filter((uri) => uri.trim() !== ""), encode: (uris) => uris }
).pipe(
  Schema.filter((uris) => uris.length > 0 || "must contain at least one uri"),
  Schema.filter((uris) => uris.length <= MAX_BATCH_SIZE || `must contain at most ${MAX_BATCH_SIZE} uris`)
)

/** `POST /batch` body. */
export const CreateBatchBody = Schema.Struct({
  uris: Uris,
  checked_within: Schema.optionalWith(Seconds, { default: () => DEFAULT_CHECKED_WITHIN_SECONDS }),
  priority: Schema.optionalWith(Priority, { default: () => "high" as const }),
  webhook_uri: Schema.optional(WebhookUri),
  webhook_secret_token: Schema.optional(StorableString),
  /** Look the uris' `#fragment`s up on their HTML pages; the service's setting when not given. */
  check_fragments: Schema.optional(Schema.Boolean.annotations({ message: () => "must be true or false" }))
})
export type CreateBatchBody = typeof CreateBatchBody.Type

