import { describe, expect, it } from "@effect/vitest"
import { firstFreeSlug, MAX_SLUG_LENGTH, slugCandidate, slugify } from "../../src/domain/slug"

describe("slugify", () => {
  it("lowercases and joins words with single hyphens", () => {
    expect(slugify("Brexit: what you need to know")).toBe("brexit-what-you-need-to-know")
    expect(slugify("  --Tax  &  VAT--  ")).toBe("tax-vat")
  })

  it("drops accents and keeps digits", () => {
    expect(slugify("Café Crème 2024")).toBe("cafe-creme-2024")
  })

  it("has a fallback for a title with no letters or digits", () => {
    expect(slugify("!!! ???")).toBe("subscriber-list")
    expect(slugify("日本語")).toBe("subscriber-list")
  })

  it("keeps at most 255 characters without a trailing hyphen", () => {
    const slug = slugify(`${"a".repeat(254)} b`)
    expect(slug.length).toBeLessThanOrEqual(MAX_SLUG_LENGTH)
    expect(slug).toBe("a".repeat(254))
  })
})

describe("slug collisions", () => {
  it("tries the base, then -2, -3 and so on", () => {
    expect([1, 2, 3].map((n) => slugCandidate("news", n))).toEqual(["news", "news-2", "news-3"])
    expect(firstFreeSlug("news", new Set())).toBe("news")
    expect(firstFreeSlug("news", new Set(["news", "news-2", "news-4"]))).toBe("news-3")
  })

  it("keeps a suffixed slug within the length limit", () => {
    const long = "a".repeat(MAX_SLUG_LENGTH)
    expect(slugCandidate(long, 12)).toBe(`${"a".repeat(MAX_SLUG_LENGTH - 3)}-12`)
  })
})
