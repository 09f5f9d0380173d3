import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { BatchReport } from "../../src/api/reports"
import type { Batch, Link } from "../../src/domain/reports"
import { batchJson, batchToWire } from "../../src/domain/reports"

const pending: Link = {
  uri: "https://example.org/a",
  status: "pending",
  checked: null,
  problemSummary: null,
  errors: [],
  warnings: [],
  danger: [],
  suggestedFix: null
}

const links: ReadonlyArray<Link> = [
  pending,
  { ...pending, uri: "https://example.org/b#café", status: "ok", checked: new Date("2026-11-29T12:00:00.123Z") },
  {
    uri: "https://example.org/\"quoted\"\\path?q=</script>\u2028",
    status: "caution",
    checked: new Date("2026-11-29T12:00:01Z"),
    problemSummary: "Missing section",
    errors: [],
    warnings: ["The section \"rates\" is not on the page.", "Line\nbreak and tab\t"],
    danger: ["\u0000 control"],
    suggestedFix: "Link to the page's top, or to a section it has."
  },
  { ...pending, status: "broken", checked: new Date(0), problemSummary: "404", errors: ["Not found"] }
]

const schemaJson = (batch: Batch) => JSON.stringify(Schema.encodeSync(BatchReport)(batchToWire(batch)))

describe("a batch's report as JSON text", () => {
  it("is the text the contract's schema encodes, key for key and byte for byte", () => {
    const inProgress: Batch = {
      id: 42,
      links,
      totals: { links: 4, ok: 1, caution: 1, broken: 1, pending: 1, danger: 1 },
      completedAt: null
    }
    const completed: Batch = { ...inProgress, id: 9007199254740991, completedAt: new Date("2026-11-29T12:00:02.999Z") }
    const empty: Batch = { ...inProgress, links: [], totals: { ...inProgress.totals, links: 0 } }
    for (const batch of [inProgress, completed, empty]) expect(batchJson(batch)).toBe(schemaJson(batch))
  })
})
