import { createHash } from "node:crypto"
import { keyedRecord } from "../api/criteria"
import type { Criteria, CriterionValue } from "../api/criteria"

/** `any`: at least one of the values; `all`: every one of them. A plain array of values means `any`. */
export type Match = "any" | "all"

/** What a list asks of one tag or link, normalised: values sorted (by code unit) and without duplicates. */
export interface Criterion {
  readonly match: Match
  readonly values: ReadonlyArray<string>
}

/** Tags or links by name, normalised: names in sorted order. A `Map`, so any name is plain data. */
export type CriteriaMap = ReadonlyMap<string, Criterion>

/** What a subscriber list matches on. Type fields are `""` and `contentId` is `null` when the list does not use them. */
export interface ListCriteria {
  readonly tags: CriteriaMap
  readonly links: CriteriaMap
  readonly documentType: string
  readonly emailDocumentSupertype: string
  readonly governmentDocumentSupertype: string
  readonly contentId: string | null
}

/** Criteria as a client gives them: any field may be absent or `null`. */
export interface ListCriteriaInput {
  readonly tags?: Criteria | null | undefined
  readonly links?: Criteria | null | undefined
  readonly documentType?: string | null | undefined
  readonly emailDocumentSupertype?: string | null | undefined
  readonly governmentDocumentSupertype?: string | null | undefined
  readonly contentId?: string | null | undefined
}

/** Compares by UTF-16 code units: the same order everywhere, unlike `localeCompare`. */
export const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

const sortedUnique = (values: Iterable<string>) => [...new Set(values)].sort(byCodeUnit)

export const normaliseCriterion = (value: CriterionValue): Criterion =>
  "all" in value
    ? { match: "all", values: sortedUnique(value.all) }
    : { match: "any", values: sortedUnique("any" in value ? value.any : value as ReadonlyArray<string>) }

/** Sorted names, each criterion normalised. Reads own keys only, so `__proto__` is a name like any other. */
export const normaliseCriteria = (criteria: Criteria | null | undefined): CriteriaMap =>
  new Map(
    Object.entries(criteria ?? {})
      .sort(([a], [b]) => byCodeUnit(a, b))
      .map(([name, value]) => [name, normaliseCriterion(value)] as const)
  )

export const normaliseListCriteria = (input: ListCriteriaInput): ListCriteria => ({
  tags: normaliseCriteria(input.tags),
  links: normaliseCriteria(input.links),
  documentType: input.documentType ?? "",
  emailDocumentSupertype: input.emailDocumentSupertype ?? "",
  governmentDocumentSupertype: input.governmentDocumentSupertype ?? "",
  contentId: input.contentId === "" ? null : input.contentId ?? null
})

/** A list with none of these matches nothing. */
export const hasCriteria = (criteria: ListCriteria) =>
  criteria.tags.size > 0 ||
  criteria.links.size > 0 ||
  criteria.documentType !== "" ||
  criteria.emailDocumentSupertype !== "" ||
  criteria.governmentDocumentSupertype !== "" ||
  criteria.contentId !== null

const canonicalEntries = (criteria: CriteriaMap) =>
  [...criteria]
    .sort(([a], [b]) => byCodeUnit(a, b))
    .map(([name, { match, values }]) => [name, match, sortedUnique(values)])

/**
 * The SHA-256 (hex) of the criteria's canonical form: equal for criteria that mean the same, whatever the order of
 * names or values, duplicates, or a plain array written for `any`. Lists are looked up by it.
 */
export const criteriaDigest = (criteria: ListCriteria): string =>
  createHash("sha256")
    .update(JSON.stringify([
      "subscriber-list-criteria/1",
      canonicalEntries(criteria.tags),
      canonicalEntries(criteria.links),
      criteria.documentType,
      criteria.emailDocumentSupertype,
      criteria.governmentDocumentSupertype,
      criteria.contentId
    ]))
    .digest("hex")

/** Criteria as the API shows them: `any` as a plain array, `all` as `{"all": [...]}`. */
export const criteriaToWire = (criteria: CriteriaMap): Criteria =>
  keyedRecord([...criteria].map(([name, { match, values }]) => [name, match === "all" ? { all: values } : values] as const))

/** Criteria as stored (JSON): `{"name": {"any": [...]}}` or `{"name": {"all": [...]}}`. */
export const criteriaToStored = (criteria: CriteriaMap): Criteria =>
  keyedRecord([...criteria].map(([name, { match, values }]) => [name, match === "all" ? { all: values } : { any: values }] as const))
