import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import type { Criteria, CriterionValue } from "../../src/api/index"
import { keyedRecord } from "../../src/api/index"
import { criteriaDigest, criteriaToWire, hasCriteria, normaliseListCriteria } from "../../src/domain/criteria"
import type { ListCriteriaInput } from "../../src/domain/criteria"

const digestOf = (input: ListCriteriaInput) => criteriaDigest(normaliseListCriteria(input))

describe("normaliseListCriteria", () => {
  it("sorts names and values, drops duplicate values and reads a plain array as any", () => {
    const criteria = normaliseListCriteria({
      tags: keyedRecord<CriterionValue>([["topics", ["b", "a", "b"]], ["format", { all: ["z", "y", "z"] }]]),
      links: keyedRecord<CriterionValue>([["taxon", { any: ["t2", "t1"] }]])
    })
    expect([...criteria.tags]).toEqual([
      ["format", { match: "all", values: ["y", "z"] }],
      ["topics", { match: "any", values: ["a", "b"] }]
    ])
    expect([...criteria.links]).toEqual([["taxon", { match: "any", values: ["t1", "t2"] }]])
  })

  it("reads absent, null and empty type fields and content_id as not used", () => {
    const none = normaliseListCriteria({ documentType: null, emailDocumentSupertype: "", contentId: "" })
    expect(none).toEqual({
      tags: new Map(),
      links: new Map(),
      documentType: "",
      emailDocumentSupertype: "",
      governmentDocumentSupertype: "",
      contentId: null
    })
    expect(hasCriteria(none)).toBe(false)
    expect(hasCriteria(normaliseListCriteria({ contentId: "c" }))).toBe(true)
    expect(hasCriteria(normaliseListCriteria({ governmentDocumentSupertype: "news" }))).toBe(true)
    expect(hasCriteria(normaliseListCriteria({ links: keyedRecord([["x", ["y"]]]) }))).toBe(true)
  })

  it("keeps hostile names as names", () => {
    const criteria = normaliseListCriteria({
      tags: JSON.parse('{"__proto__": ["a"], "constructor": {"all": ["b"]}}') as Criteria
    })
    expect([...criteria.tags.keys()]).toEqual(["__proto__", "constructor"])
    const wire = criteriaToWire(criteria.tags)
    expect(Object.getPrototypeOf(wire)).toBeNull()
    expect(JSON.stringify(wire)).toBe('{"__proto__":["a"],"constructor":{"all":["b"]}}')
  })
})

describe("criteriaDigest", () => {
  it("is a SHA-256 in hex", () => {
    expect(digestOf({ documentType: "guide" })).toMatch(/^[0-9a-f]{64}$/)
  })

  it("does not change with the order of names or values, duplicates, or any written as a plain array", () => {
    const names = fc.uniqueArray(fc.string({ minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 5 })
    fc.assert(
      fc.property(
        names,
        fc.array(fc.string({ maxLength: 4 }), { minLength: 1, maxLength: 5 }),
        fc.boolean(),
        fc.nat(),
        (keys, values, asAny, seed) => {
          const shuffled = <A>(items: ReadonlyArray<A>) =>
            items.map((item, index) => ({ item, rank: (index * 7919 + seed) % 104729 })).sort((a, b) => a.rank - b.rank)
              .map(({ item }) => item)
          const original = keyedRecord<CriterionValue>(keys.map((key) => [key, values]))
          const rewritten = keyedRecord<CriterionValue>(
            shuffled(keys).map((key) => [key, asAny ? { any: [...shuffled(values), ...values] } : shuffled(values)])
          )
          expect(digestOf({ tags: rewritten, documentType: "guide" })).toBe(digestOf({ tags: original, documentType: "guide" }))
        }
      ),
      { numRuns: 200 }
    )
  })

  it("changes with anything that changes the meaning", () => {
    const base: ListCriteriaInput = { tags: keyedRecord([["format", ["guide"]]]) }
    const digests = [
      digestOf(base),
      digestOf({ tags: keyedRecord([["format", { all: ["guide"] }]]) }),
      digestOf({ links: keyedRecord([["format", ["guide"]]]) }),
      digestOf({ tags: keyedRecord([["format", ["guide", "news"]]]) }),
      digestOf({ tags: keyedRecord([["formats", ["guide"]]]) }),
      digestOf({ ...base, documentType: "guide" }),
      digestOf({ ...base, emailDocumentSupertype: "guide" }),
      digestOf({ ...base, governmentDocumentSupertype: "guide" }),
      digestOf({ ...base, contentId: "guide" }),
      digestOf({ documentType: "guide" }),
      digestOf({ contentId: "guide" }),
      // a name that would run into its values if they were simply joined
      digestOf({ tags: keyedRecord([["format,guide", ["x"]]]) })
    ]
    expect(new Set(digests).size).toBe(digests.length)
  })
})
