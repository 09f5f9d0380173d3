import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import fc from "fast-check"
import type { CriterionValue, SubscriberListQuery } from "../../src/api/index"
import {
  decodeSubscriberListQuery,
  keyedRecord,
  SubscriberListQueryParams,
  subscriberListQueryParams
} from "../../src/api/index"

const decoded = (query: Parameters<typeof decodeSubscriberListQuery>[0]) =>
  Either.getOrThrowWith(decodeSubscriberListQuery(query), (error) => error)

const refusal = (query: Parameters<typeof decodeSubscriberListQuery>[0]) =>
  Either.match(decodeSubscriberListQuery(query), {
    onLeft: ({ parameter, problem }) => ({ parameter, problem }),
    onRight: (query) => {
      throw new Error(`expected a refusal, got ${JSON.stringify(query)}`)
    }
  })

/** Plain objects to compare with: the decoder's records have no prototype. */
const plain = (query: SubscriberListQuery) => JSON.parse(JSON.stringify(query))

const HOSTILE_NAMES = ["__proto__", "constructor", "prototype", "toString", "hasOwnProperty", "__defineGetter__"]

describe("decodeSubscriberListQuery", () => {
  it("reads each bracket form of tags and links", () => {
    const query = decoded(
      "tags[format][]=guide&tags[format][]=news&tags[topics][any][]=a&links[taxon][all][]=t1&links[taxon][all][]=t2"
    )
    expect(plain(query)).toEqual({
      tags: { format: ["guide", "news"], topics: { any: ["a"] } },
      links: { taxon: { all: ["t1", "t2"] } }
    })
  })

  it("reads the seed's tags[name]=value, indexed arrays and [any]/[all] without a final []", () => {
    expect(plain(decoded("tags[format]=guide&tags[policy][0]=a&tags[policy][1]=b&links[org][any]=o&links[x][all]=y")))
      .toEqual({
        tags: { format: ["guide"], policy: ["a", "b"] },
        links: { org: { any: ["o"] }, x: { all: ["y"] } }
      })
  })

  it("reads the type fields and content_id, and leaves unknown parameters alone", () => {
    const query = decoded(
      "document_type=guide&email_document_supertype=publications&government_document_supertype=news&content_id=c-1&utf8=%E2%9C%93&page=2"
    )
    expect(plain(query)).toEqual({
      tags: {},
      links: {},
      document_type: "guide",
      email_document_supertype: "publications",
      government_document_supertype: "news",
      content_id: "c-1"
    })
  })

  it("reads percent-encoded brackets, a leading ?, URLSearchParams and a router's flat parameters alike", () => {
    const expected = { tags: { format: ["guide", "news"] }, links: {} }
    expect(plain(decoded("?tags%5Bformat%5D%5B%5D=guide&tags%5Bformat%5D%5B%5D=news"))).toEqual(expected)
    expect(plain(decoded(new URLSearchParams([["tags[format][]", "guide"], ["tags[format][]", "news"]])))).toEqual(expected)
    expect(plain(decoded({ "tags[format][]": ["guide", "news"] }))).toEqual(expected)
    expect(plain(decoded({ "tags[format][]": "guide", "tags[format][any][]": "news" }))).toEqual({
      tags: { format: { any: ["guide", "news"] } },
      links: {}
    })
  })

  it("treats a plain array and [any] of one name as one any criterion", () => {
    expect(plain(decoded("tags[k][]=a&tags[k][any][]=b&tags[k][]=c"))).toEqual({
      tags: { k: { any: ["a", "b", "c"] } },
      links: {}
    })
  })

  it("keeps __proto__, constructor and other hostile names as plain data", () => {
    for (const name of HOSTILE_NAMES) {
      const query = decoded(`tags[${name}][]=x&links[${name}][all][]=y`)
      expect(Object.getPrototypeOf(query.tags)).toBeNull()
      expect(Object.keys(query.tags)).toEqual([name])
      expect(Object.keys(query.links)).toEqual([name])
      expect(query.tags[name]).toEqual(["x"])
      expect(query.links[name]).toEqual({ all: ["y"] })
    }
    expect(Object.prototype).not.toHaveProperty("x")
    expect(({} as Record<string, unknown>)["x"]).toBeUndefined()
  })

  it("names the parameter that is malformed", () => {
    const form = "must be of the form tags[name][], tags[name][any][] or tags[name][all][]"
    expect(refusal("tags=guide")).toEqual({ parameter: "tags", problem: form })
    expect(refusal("tags[format][some][]=guide")).toEqual({ parameter: "tags[format][some][]", problem: form })
    expect(refusal("tags[format][any][][]=guide")).toEqual({ parameter: "tags[format][any][][]", problem: form })
    expect(refusal("links[a[b]][]=x")).toEqual({ parameter: "links[a[b]][]", problem: form })
    expect(refusal("tags[format][__proto__][]=x")).toEqual({ parameter: "tags[format][__proto__][]", problem: form })
    expect(refusal("tags[][]=guide")).toEqual({ parameter: "tags[][]", problem: "must name a tag or link" })
    expect(refusal("tags[k][all][]=a&tags[k][]=b")).toEqual({
      parameter: "tags[k][]",
      problem: "mixes [all] with another form for tags[k]"
    })
    expect(refusal("links[k][any][]=a&links[k][all][]=b").parameter).toBe("links[k][all][]")
    expect(refusal("document_type=a&document_type=b")).toEqual({ parameter: "document_type", problem: "must be given once" })
    expect(refusal("tags[k][]=a%00b")).toEqual({ parameter: "tags[k][]", problem: "must not contain NUL characters (U+0000)" })
    expect(refusal("tags[a%00][]=b").parameter).toBe("tags[a\u0000][]")
    expect(refusal(`content_id=${"x".repeat(1001)}`).problem).toBe("must be at most 1000 characters")
  })

  it("refuses more than 100 names of one kind", () => {
    const names = Array.from({ length: 101 }, (_, index) => `tags[t${index}][]=v`).join("&")
    expect(refusal(names)).toEqual({ parameter: "tags[t100][]", problem: "must not name more than 100 tags" })
    expect(Either.isRight(decodeSubscriberListQuery(names.replace(/&tags\[t100\]\[\]=v$/, "")))).toBe(true)
  })
})

const name = fc.oneof(fc.constantFrom(...HOSTILE_NAMES, "format", "topics"), fc.string({ minLength: 1, maxLength: 12 }))
  .filter((text) => !/[[\]\u0000]/.test(text) && !/[\uD800-\uDFFF]/.test(text))
const value = fc.string({ maxLength: 12 }).filter((text) => !/[\u0000\uD800-\uDFFF]/.test(text))
const values = fc.array(value, { minLength: 1, maxLength: 4 })
const criterion: fc.Arbitrary<CriterionValue> = fc.oneof(
  values,
  values.map((any) => ({ any })),
  values.map((all) => ({ all }))
)
const criteria = fc.uniqueArray(fc.tuple(name, criterion), { selector: ([key]) => key, maxLength: 5 })
  .map((entries) => keyedRecord(entries))
const query: fc.Arbitrary<SubscriberListQuery> = fc.record(
  {
    tags: criteria,
    links: criteria,
    document_type: value,
    email_document_supertype: value,
    government_document_supertype: value,
    content_id: value
  },
  { requiredKeys: ["tags", "links"] }
)

describe("decodeSubscriberListQuery, for any input", () => {
  it("reads back the parameters a client writes for any criteria", () => {
    fc.assert(
      fc.property(query, (original) => {
        const written = new URLSearchParams(subscriberListQueryParams(original).map(([key, text]) => [key, text]))
        expect(plain(decoded(written.toString()))).toEqual(plain(original))
      }),
      { numRuns: 300 }
    )
  })

  it("never throws and never changes Object.prototype, whatever the parameters", () => {
    const fragment = fc.constantFrom("tags", "links", "[", "]", "[]", "any", "all", "0", ...HOSTILE_NAMES, "document_type")
    const parameter = fc.oneof(fc.array(fragment, { maxLength: 6 }).map((parts) => parts.join("")), fc.string())
    const before = Object.getOwnPropertyNames(Object.prototype).sort()
    fc.assert(
      fc.property(fc.array(fc.tuple(parameter, fc.string()), { maxLength: 10 }), (pairs) => {
        const result = decodeSubscriberListQuery(new URLSearchParams(pairs))
        if (Either.isRight(result)) {
          expect(Object.getPrototypeOf(result.right.tags)).toBeNull()
          expect(Object.getPrototypeOf(result.right.links)).toBeNull()
        } else {
          expect(pairs.map(([key]) => key)).toContain(result.left.parameter)
        }
      }),
      { numRuns: 500 }
    )
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(before)
  })
})

describe("SubscriberListQueryParams", () => {
  it("decodes a router's flat parameters and encodes criteria back to them", () => {
    const flat = { "tags[format][]": ["guide", "news"], "links[taxon][all][]": "t1", document_type: "guide" }
    const query = Schema.decodeUnknownSync(SubscriberListQueryParams)(flat)
    expect(plain(query)).toEqual({
      tags: { format: ["guide", "news"] },
      links: { taxon: { all: ["t1"] } },
      document_type: "guide"
    })
    expect({ ...Schema.encodeSync(SubscriberListQueryParams)(query) }).toEqual({
      "tags[format][]": ["guide", "news"],
      "links[taxon][all][]": ["t1"],
      document_type: ["guide"]
    })
  })

  it("fails naming the parameter", () => {
    const result = Schema.decodeUnknownEither(SubscriberListQueryParams)({ "tags[k][x]": "v" })
    expect(Either.isLeft(result) && result.left.message).toContain("tags[k][x] must be of the form")
  })
})
