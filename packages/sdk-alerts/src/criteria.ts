import { type Criteria, type CriterionValue, keyedRecord } from "@civicstack/core-alerts/api"

/** A list criterion met when the content has at least one of `values` (what a plain array means too). */
export const anyOf = (...values: ReadonlyArray<string>): { readonly any: ReadonlyArray<string> } => ({ any: values })

/** A list criterion met only when the content has every one of `values`. */
export const allOf = (...values: ReadonlyArray<string>): { readonly all: ReadonlyArray<string> } => ({ all: values })

/**
 * Tags or links from name and criterion pairs (or a `Map`). Names are data: `criteria([["__proto__", ["x"]]])` is
 * the tag `__proto__`, which an object literal `{ __proto__: [...] }` would not give (it sets the prototype).
 */
export const criteria = (
  entries: Iterable<readonly [string, CriterionValue]> | ReadonlyMap<string, CriterionValue>
): Criteria => keyedRecord(entries)
