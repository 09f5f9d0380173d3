import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { PermanentDeliveryFailure } from "../../src/services/EmailProvider"
import type { ClaimedEmail } from "../../src/storage/EmailStore"
import { outgoingEmail, sharedContentIds } from "../../src/workers/delivery"

const NOTIFICATION = "00000000-0000-4000-8000-000000000001"
const SUBSCRIPTION = "00000000-0000-4000-8000-000000000002"
const settings = { publicSiteUrl: "https://www.example.org" }
const content = { subject: "Tax changes", bodyBefore: "Rates change.\n\n", bodyAfter: "\n\nThe footer." }
const claimed = (body: ClaimedEmail["body"], subscriptionIds: ReadonlyArray<string> = []): ClaimedEmail => ({
  id: "e-1",
  address: "ada@example.com",
  subject: "Tax changes",
  body,
  attempt: 1,
  subscriptionIds
})
const lines = `[Unsubscribe from Tax](https://www.example.org/email/unsubscribe/${SUBSCRIPTION})`
const aroundContent = { _tag: "AroundSharedContent", notificationId: NOTIFICATION, unsubscribeLines: lines } as const

describe("the message of a claimed email", () => {
  it("puts the unsubscribe lines inside the notification's shared content", () => {
    expect(outgoingEmail(claimed(aroundContent, [SUBSCRIPTION]), new Map([[NOTIFICATION, content]]), settings))
      .toEqual(Either.right({
        id: "e-1",
        address: "ada@example.com",
        subject: "Tax changes",
        body: `Rates change.\n\n${lines}\n\nThe footer.`,
        unsubscribeUrl: `https://www.example.org/email/unsubscribe/${SUBSCRIPTION}`
      }))
  })

  it("sends a whole body as it is, whatever contents were read", () => {
    expect(outgoingEmail(claimed({ _tag: "Whole", text: "Click." }), new Map(), settings)).toEqual(Either.right({
      id: "e-1",
      address: "ada@example.com",
      subject: "Tax changes",
      body: "Click."
    }))
  })

  it("fails for good, without blaming the address, when the content is not stored", () => {
    expect(outgoingEmail(claimed(aroundContent), new Map(), settings)).toEqual(Either.left(new PermanentDeliveryFailure({
      reason: `the content of notification ${NOTIFICATION} is not stored`,
      addressRejected: false
    })))
  })

  it("reads each notification's content once per batch", () => {
    expect(sharedContentIds([claimed(aroundContent), claimed({ _tag: "Whole", text: "x" }), claimed(aroundContent)]))
      .toEqual([NOTIFICATION])
  })
})
