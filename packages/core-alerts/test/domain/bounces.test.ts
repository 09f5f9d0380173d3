import { describe, expect, it } from "@effect/vitest"
import { deliveryStatusOf, emailIdOfVerpAddress, readDeliveryStatus, verpAddress } from "../../src/domain/bounces"

const ID = "1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed"

describe("VERP addresses", () => {
  it("carry the email's id after a + and give it back, whatever the case", () => {
    expect(verpAddress("bounces@example.org", ID)).toBe(`bounces+${ID}@example.org`)
    expect(emailIdOfVerpAddress("bounces@example.org", `bounces+${ID}@example.org`)).toBe(ID)
    expect(emailIdOfVerpAddress("bounces@example.org", `BOUNCES+${ID.toUpperCase()}@Example.ORG`)).toBe(ID)
  })

  it("name no email when the address is not one of ours or holds no email id", () => {
    for (
      const address of [
        "bounces@example.org",
        `bounces+${ID}@other.example`,
        `other+${ID}@example.org`,
        "bounces+not-an-id@example.org",
        `bounces+${ID}x@example.org`,
        `bounces+${ID}`,
        ""
      ]
    ) expect(emailIdOfVerpAddress("bounces@example.org", address), address).toBeUndefined()
  })
})

describe("delivery status notifications (RFC 3464)", () => {
  const report = [
    "Reporting-MTA: dns; mx.example.net",
    "Arrival-Date: Mon, 2 Mar 2026 09:00:00 +0000",
    "",
    "Final-Recipient: rfc822; ann@example.org",
    "Action: failed",
    "Status: 5.1.1",
    "Diagnostic-Code: smtp; 550 5.1.1 <ann@example.org>:",
    "  Recipient address rejected",
    "",
    "Original-Recipient: rfc822;Bob@Example.org",
    "Final-Recipient: rfc822; bob@mail.example.org",
    "Action: delayed",
    "Status: 4.4.7",
    "",
    "Final-Recipient: rfc822; <cy@example.org>",
    "Action: failed",
    "Status: 4.2.2 (mailbox full)",
    "",
    "Final-Recipient: x400; a=b",
    "Action: failed",
    "Status: 5.0.0",
    "",
    "Final-Recipient: rfc822; dan@example.org",
    "Action: delivered",
    "Status: 2.0.0"
  ].join("\r\n")

  it("reads each recipient's address (the original one when given), action, status and diagnostic", () => {
    expect(readDeliveryStatus(report)).toEqual([
      {
        address: "ann@example.org",
        action: "failed",
        status: "5.1.1",
        diagnostic: "smtp; 550 5.1.1 <ann@example.org>: Recipient address rejected"
      },
      { address: "Bob@Example.org", action: "delayed", status: "4.4.7", diagnostic: null },
      { address: "cy@example.org", action: "failed", status: "4.2.2", diagnostic: null },
      { address: "dan@example.org", action: "delivered", status: "2.0.0", diagnostic: null }
    ])
  })

  it("a failure with 5.x.x is for good; other failures and delays are temporary; the rest went through", () => {
    expect(readDeliveryStatus(report).map(deliveryStatusOf)).toEqual([
      "permanent-failure",
      "temporary-failure",
      "temporary-failure",
      "delivered"
    ])
  })

  it("finds nothing in text that is not a status report", () => {
    expect(readDeliveryStatus("")).toEqual([])
    expect(readDeliveryStatus("Hello,\n\nI am on holiday until Monday.")).toEqual([])
    expect(readDeliveryStatus("Final-Recipient: rfc822; ann@example.org\nAction: failed\nStatus: five")).toEqual([])
  })
})
