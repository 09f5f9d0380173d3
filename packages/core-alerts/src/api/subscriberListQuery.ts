import { Either, ParseResult, Record, Schema } from "effect"
import { Criteria, keyedRecord } from "./criteria"
import type { CriterionValue, KeyedRecord } from "./criteria"
import { unstorableTextProblem } from "./text"

/** A query parameter of `GET /subscriber-lists` that cannot be read; nothing was looked up. */
export class InvalidQueryParameter extends Schema.TaggedError<InvalidQueryParameter>()("InvalidQueryParameter", {
  parameter: Schema.String,
  problem: Schema.String
}) {
  override get message() {
    return `${this.parameter} ${this.problem}`
  }
}

/** The criteria that are one value each, named once here for the schema and the reader below. */
const scalarCriteria = {
  document_type: Schema.optional(Schema.String),
  email_document_supertype: Schema.optional(Schema.String),
  government_document_supertype: Schema.optional(Schema.String),
  content_id: Schema.optional(Schema.String)
}
type ScalarParameter = keyof typeof scalarCriteria
const SCALAR_PARAMETERS = Record.keys(scalarCriteria)

/** The criteria of `GET /subscriber-lists`: a list is found when its criteria are exactly these. */
export const SubscriberListQuery = Schema.Struct({ tags: Criteria, links: Criteria, ...scalarCriteria })
  .annotations({ identifier: "SubscriberListQuery" })
export type SubscriberListQuery = typeof SubscriberListQuery.Type

/** Query parameters as a router hands them over: one string, or an array of strings for a repeated name. */
export type FlatQueryParams = { readonly [name: string]: string | ReadonlyArray<string> }

const isScalarParameter = (name: string): name is ScalarParameter => Object.hasOwn(scalarCriteria, name)

/**
 * `tags[name]`, `tags[name][]` (or `[0]`, `[1]`... as some query builders write arrays), `tags[name][any][]`,
 * `tags[name][all][]`, and the same with `links`; `[any]` and `[all]` may leave out their final `[]`.
 */
const CRITERION_PARAMETER = /^(tags|links)\[([^[\]]*)\](?:\[\d*\]|\[(any|all)\](?:\[\d*\])?)?$/

const MAX_KEYS = 100
const MAX_VALUES = 1000
const MAX_VALUE_LENGTH = 1000

/** How a criterion was written: a plain array, `any` or `all`. A plain array means what `any` does. */
type Written = "plain" | "any" | "all"

interface Collected {
  written: Written
  readonly values: Array<string>
}

const combine = (earlier: Written, later: Written): Written | undefined =>
  earlier === later ? earlier : earlier === "all" || later === "all" ? undefined : "any"

const criterionOf = ({ values, written }: Collected): CriterionValue =>
  written === "plain" ? values : written === "any" ? { any: values } : { all: values }

const pairsOf = (query: URLSearchParams | string | FlatQueryParams): Iterable<readonly [string, string]> => {
  if (typeof query === "string") return new URLSearchParams(query)
  if (query instanceof URLSearchParams) return query
  return Object.entries(query).flatMap(([name, value]) =>
    typeof value === "string" ? [[name, value] as const] : value.map((item) => [name, item] as const)
  )
}

/**
 * Reads the criteria of `GET /subscriber-lists` from a query string, `URLSearchParams` or a router's flat
 * parameters. Unknown parameters are left alone; a malformed `tags`/`links` parameter, a repeated type field, a
 * criterion written both as `all` and otherwise, or text that cannot be stored is an `InvalidQueryParameter` naming
 * the parameter. Names are data: `tags[__proto__][]` is the tag `__proto__`.
 */
export const decodeSubscriberListQuery = (
  query: URLSearchParams | string | FlatQueryParams
): Either.Either<SubscriberListQuery, InvalidQueryParameter> => {
  const criteria = { tags: new Map<string, Collected>(), links: new Map<string, Collected>() }
  const scalars = new Map<ScalarParameter, string>()
  const refuse = (parameter: string, problem: string) =>
    Either.left(new InvalidQueryParameter({ parameter, problem }))

  for (const [parameter, value] of pairsOf(query)) {
    const isScalar = isScalarParameter(parameter)
    const isCriterion = /^(tags|links)(\[|$)/.test(parameter)
    if (!isScalar && !isCriterion) continue
    const valueProblem = value.length > MAX_VALUE_LENGTH
      ? `must be at most ${MAX_VALUE_LENGTH} characters`
      : unstorableTextProblem(value)
    if (valueProblem !== undefined) return refuse(parameter, valueProblem)

    if (isScalar) {
      if (scalars.has(parameter)) return refuse(parameter, "must be given once")
      scalars.set(parameter, value)
      continue
    }
    const match = CRITERION_PARAMETER.exec(parameter)
    if (match === null) {
      return refuse(parameter, "must be of the form tags[name][], tags[name][any][] or tags[name][all][]")
    }
    const kind = match[1] as "tags" | "links"
    const key = match[2]!
    const written: Written = (match[3] as "any" | "all" | undefined) ?? "plain"
    const keyProblem = key === "" ? "must name a tag or link" : unstorableTextProblem(key)
    if (keyProblem !== undefined) return refuse(parameter, keyProblem)

    const byKey = criteria[kind]
    const collected = byKey.get(key)
    if (collected === undefined) {
      if (byKey.size >= MAX_KEYS) return refuse(parameter, `must not name more than ${MAX_KEYS} ${kind}`)
      byKey.set(key, { written, values: [value] })
      continue
    }
    const combined = combine(collected.written, written)
    if (combined === undefined) return refuse(parameter, `mixes [all] with another form for ${kind}[${key}]`)
    if (collected.values.length >= MAX_VALUES) return refuse(parameter, `must not give more than ${MAX_VALUES} values`)
    collected.written = combined
    collected.values.push(value)
  }

  const recordOf = (byKey: Map<string, Collected>) =>
    keyedRecord([...byKey].map(([key, collected]) => [key, criterionOf(collected)] as const))
  const decoded: { -readonly [K in keyof SubscriberListQuery]: SubscriberListQuery[K] } = {
    tags: recordOf(criteria.tags),
    links: recordOf(criteria.links)
  }
  for (const [name, value] of scalars) decoded[name] = value
  return Either.right(decoded)
}

/** The query parameters that ask for `query`: what a client sends to `GET /subscriber-lists`. */
export const subscriberListQueryParams = (query: SubscriberListQuery): Array<readonly [string, string]> => {
  const criterionParams = (kind: "tags" | "links", criteria: KeyedRecord<CriterionValue>) =>
    Object.entries(criteria).flatMap(([key, criterion]) => {
      const [suffix, values] = "all" in criterion
        ? ["[all][]", criterion.all]
        : "any" in criterion
        ? ["[any][]", criterion.any]
        : ["[]", criterion as ReadonlyArray<string>]
      return values.map((value) => [`${kind}[${key}]${suffix}`, value] as const)
    })
  const scalars = SCALAR_PARAMETERS.flatMap((name) => {
    const value = query[name]
    return value === undefined ? [] : [[name, value] as const]
  })
  return [...criterionParams("tags", query.tags), ...criterionParams("links", query.links), ...scalars]
}

const FlatQueryParams = Schema.declare(
  (input: unknown): input is FlatQueryParams => typeof input === "object" && input !== null && !Array.isArray(input),
  { identifier: "FlatQueryParams", jsonSchema: { type: "object" } }
)

/**
 * The `urlParams` schema of `GET /subscriber-lists`: the router's flat parameters (`"tags[format][]"`) decoded by
 * `decodeSubscriberListQuery`, and encoded back by `subscriberListQueryParams`.
 */
export const SubscriberListQueryParams = Schema.transformOrFail(
  FlatQueryParams,
  Schema.typeSchema(SubscriberListQuery),
  {
    strict: true,
    decode: (params, _, ast) =>
      Either.mapLeft(
        decodeSubscriberListQuery(params),
        (invalid) => new ParseResult.Type(ast, params, invalid.message)
      ),
    encode: (query) => {
      const grouped = new Map<string, Array<string>>()
      for (const [name, value] of subscriberListQueryParams(query)) {
        grouped.set(name, [...(grouped.get(name) ?? []), value])
      }
      return ParseResult.succeed(keyedRecord<string | ReadonlyArray<string>>(grouped))
    }
  }
)
