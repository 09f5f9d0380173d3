import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import { CreateNotificationBody, CreateSubscriberListBody, decodeSubscriberListQuery, SubscriberList } from "../../src/api/index"
// A search for repeated blocks pairs this import list with another test's; lists of names share no logic.
import {
  criteriaDigest,
  listCriteriaFromWire,
  notificationFromWire,
  subscriberListToWire,
  subscriptionUrl
} from "../../src/index"
import type { SubscriberList as ListRecord } from "../../src/index"

describe("listCriteriaFromWire", () => {
  it("gives a POST body and a GET query of the same meaning the same digest", () => {
    const body = Schema.decodeUnknownSync(CreateSubscriberListBody)(JSON.parse(`{
      "title": "Tax",
      "tags": {"topics": {"any": ["vat", "tax"]}, "__proto__": {"all": ["b", "a"]}},
      "links": {},
      "document_type": "guide",
      "email_document_supertype": null,
      "content_id": ""
    }`))
    const query = Either.getOrThrow(decodeSubscriberListQuery(
      "tags[__proto__][all][]=a&tags[__proto__][all][]=b&tags[topics][]=tax&tags[topics][]=vat&document_type=guide"
    ))
    expect(criteriaDigest(listCriteriaFromWire(query))).toBe(criteriaDigest(listCriteriaFromWire(body)))
    expect(criteriaDigest(listCriteriaFromWire({ ...query, document_type: "news" })))
      .not.toBe(criteriaDigest(listCriteriaFromWire(body)))
  })
})

describe("subscriberListToWire", () => {
  const list: ListRecord = {
    id: 7,
    title: "Tax",
    slug: "tax-2",
    criteria: listCriteriaFromWire({
      tags: JSON.parse('{"topics": {"any": ["vat", "tax"]}, "__proto__": {"all": ["b", "a"]}}')
    }),
    criteriaDigest: "d",
    createdAt: new Date("2024-03-01T12:00:00Z"),
    updatedAt: new Date("2024-03-02T12:00:00Z")
  }

  it("shows the list as the contract does", () => {
    const json = JSON.stringify(Schema.encodeSync(SubscriberList)(subscriberListToWire(list, "https://www.example.gov/")))
    expect(JSON.parse(json)).toEqual({
      id: 7,
      title: "Tax",
      slug: "tax-2",
      subscription_url: "https://www.example.gov/email/subscriptions/new?topic_id=tax-2",
      external_delivery_id: "tax-2",
      document_type: "",
      email_document_supertype: "",
      government_document_supertype: "",
      tags: { topics: ["tax", "vat"], ["__proto__"]: { all: ["a", "b"] } },
      links: {},
      content_id: null,
      created_at: "2024-03-01T12:00:00.000Z",
      updated_at: "2024-03-02T12:00:00.000Z"
    })
    expect(json).toContain('"__proto__":{"all":["a","b"]}')
  })

  it("escapes the slug in the subscription URL", () => {
    expect(subscriptionUrl("http://localhost:3000", "a&b")).toBe("http://localhost:3000/email/subscriptions/new?topic_id=a%26b")
  })
})

describe("notificationFromWire", () => {
  it("fills what was not given with null and the defaults", () => {
    const body = Schema.decodeUnknownSync(CreateNotificationBody)({ title: "T", tags: { format: ["a"] }, footnote: null })
    const notification = notificationFromWire(body)
    expect(notification).toMatchObject({ title: "T", subject: null, footnote: null, urgent: false, priority: "normal" })
    expect([...notification.tags]).toEqual([["format", ["a"]]])
    expect(notification.links.size).toBe(0)
  })
})
