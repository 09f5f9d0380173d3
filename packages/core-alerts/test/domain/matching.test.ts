import { describe, expect, it } from "@effect/vitest"
import type { CriterionValue } from "../../src/api/index"
import { keyedRecord } from "../../src/api/index"
import { normaliseListCriteria } from "../../src/domain/criteria"
import type { ListCriteriaInput } from "../../src/domain/criteria"
import { listMatches } from "../../src/domain/matching"
import type { NotificationFacts } from "../../src/domain/matching"

const list = (input: {
  readonly tags?: Record<string, CriterionValue>
  readonly links?: Record<string, CriterionValue>
} & Omit<ListCriteriaInput, "tags" | "links">) =>
  normaliseListCriteria({
    ...input,
    tags: keyedRecord(Object.entries(input.tags ?? {})),
    links: keyedRecord(Object.entries(input.links ?? {}))
  })

const notification = (facts: {
  readonly tags?: Record<string, ReadonlyArray<string>>
  readonly links?: Record<string, ReadonlyArray<string>>
  readonly documentType?: string
  readonly emailDocumentSupertype?: string
  readonly governmentDocumentSupertype?: string
  readonly contentId?: string
}): NotificationFacts => ({
  tags: new Map(Object.entries(facts.tags ?? {})),
  links: new Map(Object.entries(facts.links ?? {})),
  documentType: facts.documentType ?? null,
  emailDocumentSupertype: facts.emailDocumentSupertype ?? null,
  governmentDocumentSupertype: facts.governmentDocumentSupertype ?? null,
  contentId: facts.contentId ?? null
})

describe("listMatches", () => {
  it("a list with no criteria matches nothing", () => {
    expect(listMatches(list({}), notification({}))).toBe(false)
    expect(listMatches(list({}), notification({ tags: { format: ["guide"] }, documentType: "guide" }))).toBe(false)
  })

  it("a plain array or any needs one shared value", () => {
    const plainList = list({ tags: { topics: ["a", "b"] } })
    const anyList = list({ tags: { topics: { any: ["a", "b"] } } })
    for (const candidate of [plainList, anyList]) {
      expect(listMatches(candidate, notification({ tags: { topics: ["b", "z"] } }))).toBe(true)
      expect(listMatches(candidate, notification({ tags: { topics: ["z"] } }))).toBe(false)
      expect(listMatches(candidate, notification({ tags: { topics: [] } }))).toBe(false)
    }
  })

  it("all needs every value", () => {
    const allList = list({ tags: { topics: { all: ["a", "b"] } } })
    expect(listMatches(allList, notification({ tags: { topics: ["b", "a", "c"] } }))).toBe(true)
    expect(listMatches(allList, notification({ tags: { topics: ["a"] } }))).toBe(false)
  })

  it("every name of the list must be on the notification", () => {
    const twoTags = list({ tags: { format: ["guide"], topics: ["a"] } })
    expect(listMatches(twoTags, notification({ tags: { format: ["guide"], topics: ["a"], other: ["x"] } }))).toBe(true)
    expect(listMatches(twoTags, notification({ tags: { format: ["guide"] } }))).toBe(false)
    expect(listMatches(twoTags, notification({ links: { format: ["guide"], topics: ["a"] } }))).toBe(false)
  })

  it("values are compared exactly", () => {
    expect(listMatches(list({ tags: { format: ["Guide"] } }), notification({ tags: { format: ["guide"] } }))).toBe(false)
  })

  it("links match the notification's links the same way", () => {
    const linked = list({ links: { taxon: { all: ["t1", "t2"] }, org: ["o1"] } })
    expect(listMatches(linked, notification({ links: { taxon: ["t2", "t1"], org: ["o1", "o2"] } }))).toBe(true)
    expect(listMatches(linked, notification({ links: { taxon: ["t1"], org: ["o1"] } }))).toBe(false)
    expect(listMatches(linked, notification({ tags: { taxon: ["t1", "t2"], org: ["o1"] } }))).toBe(false)
  })

  it("a list with both links and tags matches on links and ignores its tags", () => {
    const both = list({ tags: { format: ["guide"] }, links: { taxon: ["t1"] } })
    expect(listMatches(both, notification({ links: { taxon: ["t1"] } }))).toBe(true)
    expect(listMatches(both, notification({ links: { taxon: ["t1"] }, tags: { format: ["news"] } }))).toBe(true)
    expect(listMatches(both, notification({ tags: { format: ["guide"] } }))).toBe(false)
  })

  it("each non-empty type field must equal the notification's", () => {
    const typed = list({ documentType: "guide", emailDocumentSupertype: "publications" })
    expect(listMatches(typed, notification({ documentType: "guide", emailDocumentSupertype: "publications" }))).toBe(true)
    expect(listMatches(typed, notification({ documentType: "guide" }))).toBe(false)
    expect(listMatches(typed, notification({ documentType: "news", emailDocumentSupertype: "publications" }))).toBe(false)
    const government = list({ governmentDocumentSupertype: "news-stories" })
    expect(listMatches(government, notification({ governmentDocumentSupertype: "news-stories", documentType: "x" }))).toBe(true)
    expect(listMatches(government, notification({ governmentDocumentSupertype: "speeches" }))).toBe(false)
  })

  it("type fields and tags must both hold", () => {
    const typedTags = list({ documentType: "guide", tags: { format: ["a"] } })
    expect(listMatches(typedTags, notification({ documentType: "guide", tags: { format: ["a"] } }))).toBe(true)
    expect(listMatches(typedTags, notification({ documentType: "guide", tags: { format: ["b"] } }))).toBe(false)
    expect(listMatches(typedTags, notification({ documentType: "news", tags: { format: ["a"] } }))).toBe(false)
  })

  it("a list with a content_id matches notifications with that content_id", () => {
    const content = list({ contentId: "5f1c-content" })
    expect(listMatches(content, notification({ contentId: "5f1c-content", tags: { any: ["thing"] } }))).toBe(true)
    expect(listMatches(content, notification({ contentId: "other" }))).toBe(false)
    expect(listMatches(content, notification({}))).toBe(false)
  })

  it("hostile names are names", () => {
    const hostile = list({ tags: keyedRecord([["__proto__", ["x"]], ["constructor", { all: ["y"] }]]) as never })
    expect(listMatches(hostile, notification({ tags: { constructor: ["y"] } }))).toBe(false)
    expect(listMatches(hostile, notification({ tags: Object.fromEntries([["__proto__", ["x"]], ["constructor", ["y"]]]) }))).toBe(true)
  })
})
