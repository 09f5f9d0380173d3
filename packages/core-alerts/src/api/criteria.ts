import type * as AST from "effect/SchemaAST"
import { Either, ParseResult, Schema } from "effect"
import { StorableText, unstorableTextProblem } from "./text"

/** Text of a tag or link value. */
const CriterionText = StorableText(1000)

const Values = Schema.Array(CriterionText).pipe(
  Schema.minItems(1),
  Schema.maxItems(1000)
)

/** Refuses `{"any": [...], "all": [...]}` and other extra keys: a criterion says one thing. */
const oneKey = { parseOptions: { onExcessProperty: "error" } } as const

/**
 * What a list asks of one tag or link: a plain array of values or `{any: [...]}` (at least one of them), or
 * `{all: [...]}` (every one of them).
 */
export const CriterionValue = Schema.Union(
  Values,
  Schema.Struct({ any: Values }).annotations(oneKey),
  Schema.Struct({ all: Values }).annotations(oneKey)
).annotations({
  identifier: "CriterionValue",
  message: () => ({
    message: "must be a non-empty array of strings, {\"any\": [strings]} or {\"all\": [strings]}",
    override: true
  })
})
export type CriterionValue = typeof CriterionValue.Type

/**
 * An object read from JSON whose keys are data: a null-prototype object, so that keys such as `__proto__` and
 * `constructor` are plain entries. Effect's `Schema.Record` assigns keys on `{}` and loses `__proto__`.
 */
export type KeyedRecord<A> = { readonly [key: string]: A }

const MAX_KEYS = 100
const MAX_KEY_LENGTH = 200

const isPlainObject = (input: unknown): input is Readonly<Record<string, unknown>> =>
  typeof input === "object" && input !== null && !Array.isArray(input)

const keyProblem = (key: string) =>
  key === ""
    ? "must not be empty"
    : key.length > MAX_KEY_LENGTH
    ? `must be at most ${MAX_KEY_LENGTH} characters`
    : unstorableTextProblem(key)

/** Builds a null-prototype record of `entries`; later entries of one key replace earlier ones. */
export const keyedRecord = <A>(entries: Iterable<readonly [string, A]>): KeyedRecord<A> => {
  const record: Record<string, A> = Object.create(null)
  for (const [key, value] of entries) record[key] = value
  return record
}

const mapEntries = <A, B>(
  input: unknown,
  ast: AST.Declaration,
  each: (value: A) => Either.Either<B, ParseResult.ParseIssue>
): Either.Either<KeyedRecord<B>, ParseResult.ParseIssue> => {
  if (!isPlainObject(input)) return Either.left(new ParseResult.Type(ast, input, "must be an object"))
  const entries = Object.entries(input)
  if (entries.length > MAX_KEYS) {
    return Either.left(new ParseResult.Type(ast, input, `must have at most ${MAX_KEYS} keys`))
  }
  const issues: Array<ParseResult.Pointer> = []
  const output: Array<readonly [string, B]> = []
  for (const [key, value] of entries) {
    const problem = keyProblem(key)
    if (problem !== undefined) {
      issues.push(new ParseResult.Pointer(key, input, new ParseResult.Type(ast, key, `key ${problem}`)))
      continue
    }
    const result = each(value as A)
    if (Either.isLeft(result)) issues.push(new ParseResult.Pointer(key, input, result.left))
    else output.push([key, result.right])
  }
  const [first, ...rest] = issues
  return first === undefined
    ? Either.right(keyedRecord(output))
    : Either.left(new ParseResult.Composite(ast, input, [first, ...rest]))
}

/**
 * A JSON object of names to values (`tags`, `links`), decoded into a null-prototype record: at most 100 keys of
 * 1 to 200 characters, each value decoded by `value`.
 */
export const KeyedRecordOf = <A, I>(value: Schema.Schema<A, I>, jsonSchema: object) =>
  Schema.declare(
    [value],
    {
      decode: (value) => (input, options, ast) =>
        mapEntries(input, ast, (item: unknown) => ParseResult.decodeUnknownEither(value)(item, options)),
      encode: (value) => (input, options, ast) =>
        mapEntries(input, ast, (item: A) => ParseResult.encodeEither(value)(item, options))
    },
    {
      description: "an object of names to values",
      jsonSchema: { type: "object", maxProperties: MAX_KEYS, additionalProperties: jsonSchema }
    }
  ) as Schema.Schema<KeyedRecord<A>, KeyedRecord<I>>

const StringsJsonSchema = { type: "array", items: { type: "string" }, minItems: 1 }

/** A list's tags or links: each name with the values that match it. */
export const Criteria = KeyedRecordOf(CriterionValue, {
  anyOf: [
    StringsJsonSchema,
    { type: "object", properties: { any: StringsJsonSchema }, required: ["any"], additionalProperties: false },
    { type: "object", properties: { all: StringsJsonSchema }, required: ["all"], additionalProperties: false }
  ]
}).annotations({ identifier: "Criteria" })
export type Criteria = KeyedRecord<CriterionValue>

/** A notification's tags or links: each name with the values the content has. */
export const NotificationTags = KeyedRecordOf(Schema.Array(CriterionText).pipe(Schema.maxItems(1000)), {
  type: "array",
  items: { type: "string" }
}).annotations({ identifier: "NotificationTags" })
export type NotificationTags = KeyedRecord<ReadonlyArray<string>>
