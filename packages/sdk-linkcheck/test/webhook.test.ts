import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { createHmac } from "node:crypto"
import { InvalidWebhookBody, parseWebhook, SIGNATURE_HEADER, SIGNATURE_HEADER_LOWERCASE, verifyWebhookSignature } from "../src"

const KEY = "this is a secret key"
const BODY = `{"some":"json"}`
const SIGNATURE = "d44d805a16b90922edb48f14ff4e858a5d3e39bd"

describe("verifyWebhookSignature", () => {
  it("accepts the test vector as a string and as bytes", () => {
    expect(verifyWebhookSignature(BODY, SIGNATURE, KEY)).toBe(true)
    expect(verifyWebhookSignature(new TextEncoder().encode(BODY), SIGNATURE, KEY)).toBe(true)
  })

  it("refuses a wrong signature, a wrong key and a changed body", () => {
    expect(verifyWebhookSignature(BODY, "0".repeat(40), KEY)).toBe(false)
    expect(verifyWebhookSignature(BODY, SIGNATURE, "another key")).toBe(false)
    expect(verifyWebhookSignature(`{"some": "json"}`, SIGNATURE, KEY)).toBe(false)
  })

  it("refuses a missing header without throwing", () => {
    expect(verifyWebhookSignature(BODY, undefined, KEY)).toBe(false)
    expect(verifyWebhookSignature(BODY, null, KEY)).toBe(false)
    expect(verifyWebhookSignature(BODY, "", KEY)).toBe(false)
  })

  it("refuses headers of the wrong length or form without throwing", () => {
    expect(verifyWebhookSignature(BODY, SIGNATURE.slice(0, 39), KEY)).toBe(false)
    expect(verifyWebhookSignature(BODY, `${SIGNATURE}0`, KEY)).toBe(false)
    expect(verifyWebhookSignature(BODY, `sha1=${SIGNATURE}`, KEY)).toBe(false)
    expect(verifyWebhookSignature(BODY, SIGNATURE.toUpperCase(), KEY)).toBe(false)
    expect(verifyWebhookSignature(BODY, "é".repeat(20), KEY)).toBe(false)
  })

  it("signs the exact bytes, even when they are not valid UTF-8", () => {
    const bytes = Uint8Array.from([0x7b, 0xff, 0xfe, 0x7d])
    const signature = createHmac("sha1", KEY).update(bytes).digest("hex")
    expect(verifyWebhookSignature(bytes, signature, KEY)).toBe(true)
    // Decoding first replaces the invalid bytes, so the signature no longer matches.
    expect(verifyWebhookSignature(new TextDecoder().decode(bytes), signature, KEY)).toBe(false)
  })

  it("names the header as sent and as Node lists it", () => {
    expect(SIGNATURE_HEADER).toBe("X-LinkCheckerApi-Signature")
    expect(SIGNATURE_HEADER_LOWERCASE).toBe(SIGNATURE_HEADER.toLowerCase())
  })
})

describe("parseWebhook", () => {
  const report = {
    id: 12,
    status: "completed",
    links: [{
      uri: "https://example.org/",
      status: "broken",
      checked: "2017-04-12T18:47:16Z",
      problem_summary: "Page not found",
      errors: ["The page was not found."],
      warnings: [],
      danger: [],
      suggested_fix: "Find where the page has moved to."
    }],
    totals: { links: 1, ok: 0, caution: 0, broken: 1, pending: 0, danger: 0 },
    completed_at: "2017-04-12T18:47:17Z"
  }

  it("decodes a BatchReport from the raw body, with Dates for timestamps", () => {
    const parsed = parseWebhook(new TextEncoder().encode(JSON.stringify(report)))
    expect(Either.isRight(parsed)).toBe(true)
    expect(Either.getOrThrow(parsed)).toEqual({
      ...report,
      links: [{ ...report.links[0], checked: new Date("2017-04-12T18:47:16Z") }],
      completed_at: new Date("2017-04-12T18:47:17Z")
    })
  })

  it("refuses bodies that are not UTF-8, not JSON, or not a BatchReport", () => {
    const notUtf8 = parseWebhook(Uint8Array.from([0x7b, 0xff, 0x7d]))
    const notJson = parseWebhook("{")
    const notReport = parseWebhook(JSON.stringify({ ...report, status: "done" }))
    for (const parsed of [notUtf8, notJson, notReport]) {
      expect(Either.isLeft(parsed) && parsed.left).toBeInstanceOf(InvalidWebhookBody)
    }
    expect(Either.isLeft(notUtf8) && notUtf8.left.message).toBe("The webhook body is not valid UTF-8")
    expect(Either.isLeft(notReport) && notReport.left.message).toMatch(/^The webhook body is not a BatchReport: /)
  })
})
