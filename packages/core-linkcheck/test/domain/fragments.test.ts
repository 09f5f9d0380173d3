import { describe, expect, it } from "@effect/vitest"
import type { CheckResult } from "../../src/domain/check"
import {
  hasSection,
  judgeSection,
  MAX_ANCHOR_LENGTH,
  namesSection,
  pagesOf,
  targetOf
} from "../../src/domain/fragments"

const ok: CheckResult = { status: "ok", errors: [], warnings: [], danger: [], problemSummary: null, suggestedFix: null }
const anchors = ["intro", "café", "%7E", "a b"]

describe("fragments", () => {
  it("an http(s) link is split at its first #, so that page and fragment give the link back", () => {
    expect(targetOf("https://example.org/guide?q=1#costs#more")).toEqual({
      page: "https://example.org/guide?q=1",
      fragment: "costs#more"
    })
    expect(targetOf("https://example.org/#")).toEqual({ page: "https://example.org/", fragment: "" })
    expect(targetOf("https://example.org/")).toEqual({ page: "https://example.org/", fragment: null })
    expect(targetOf("mailto:someone@example.org#x")).toEqual({ page: "mailto:someone@example.org#x", fragment: null })
    expect(targetOf("#local")).toEqual({ page: "#local", fragment: null })
  })

  it("an empty fragment and top (in any case, percent-encoded or not) name no section", () => {
    expect(namesSection(null)).toBe(false)
    expect(namesSection("")).toBe(false)
    expect(namesSection("top")).toBe(false)
    expect(namesSection("TOP")).toBe(false)
    expect(namesSection("%74op")).toBe(false)
    expect(namesSection("topics")).toBe(true)
  })

  it("a page's anchors are read when any of its links names a section and fragments are checked", () => {
    const targets = ["https://a.example/#x", "https://a.example/", "https://b.example/#", "https://b.example/#top"]
      .map(targetOf)
    expect(pagesOf(targets, true)).toEqual([
      { uri: "https://a.example/", readsAnchors: true },
      { uri: "https://b.example/", readsAnchors: false }
    ])
    expect(pagesOf(targets, false).every((page) => !page.readsAnchors)).toBe(true)
  })

  it("a fragment is found raw, as the URL parser encodes it, or percent-decoded as UTF-8", () => {
    expect(hasSection(anchors, "intro")).toBe(true)
    expect(hasSection(anchors, "café")).toBe(true)
    expect(hasSection(anchors, "caf%C3%A9")).toBe(true)
    expect(hasSection(anchors, "%7E")).toBe(true)
    expect(hasSection(anchors, "~")).toBe(false)
    expect(hasSection(anchors, "a%20b")).toBe(true)
    expect(hasSection(anchors, "a b")).toBe(true)
    expect(hasSection(anchors, "Intro")).toBe(false)
    expect(hasSection(anchors, "%E9")).toBe(false)
  })

  it("an anchor longer than the kept length is compared by what was kept", () => {
    const long = "s".repeat(MAX_ANCHOR_LENGTH + 10)
    expect(hasSection([long.slice(0, MAX_ANCHOR_LENGTH)], long)).toBe(true)
  })

  it("a missing section makes an ok page caution with one warning, its summary and its fix", () => {
    const judged = judgeSection(ok, anchors, "costs")
    expect(judged.status).toBe("caution")
    expect(judged.warnings).toHaveLength(1)
    expect(judged.warnings[0]).toContain("#costs")
    expect(judged.problemSummary).toBe("Missing section")
    expect(judged.suggestedFix).toMatch(/^[A-Z].+\.$/)
    expect(judged.errors).toEqual([])
  })

  it("a page with a problem keeps its summary, and then no single fix is given", () => {
    const slow: CheckResult = {
      ...ok,
      status: "caution",
      warnings: ["The page took more than 5 seconds to load."],
      problemSummary: "Slow page",
      suggestedFix: "Check that the page still works."
    }
    const judged = judgeSection(slow, anchors, "costs")
    expect(judged.warnings).toHaveLength(2)
    expect(judged.problemSummary).toBe("Slow page")
    expect(judged.suggestedFix).toBeNull()
  })

  it("a broken page, a page without anchors read, a found section or no section named change nothing", () => {
    const broken: CheckResult = { ...ok, status: "broken", errors: ["Not found."], problemSummary: "Page not found" }
    expect(judgeSection(broken, anchors, "costs")).toBe(broken)
    expect(judgeSection(ok, null, "costs")).toBe(ok)
    expect(judgeSection(ok, anchors, "intro")).toBe(ok)
    expect(judgeSection(ok, anchors, "")).toBe(ok)
    expect(judgeSection(ok, anchors, "top")).toBe(ok)
    expect(judgeSection(ok, anchors, null)).toBe(ok)
  })
})
