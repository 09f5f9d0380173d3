import * as HttpApi from "@effect/platform/HttpApi"
import * as OpenApi from "@effect/platform/OpenApi"
import { describe, expect, it } from "@effect/vitest"
import { Either, ParseResult, Schema } from "effect"
import {
  AlertsCallbacksGroup,
  AlertsApi,
  AuthTokenBody,
  CreateNotificationBody,
  CreateSubscriberListBody,
  CreateSubscriptionBody,
  InvalidRequest,
  refusalOf,
  SubscriberList,
  SubscriberListQueryParams,
  Subscription,
  UnprocessableEntity
} from "../../src/api/index"

const decodeJson = <A, I>(schema: Schema.Schema<A, I>, json: string) =>
  Schema.decodeUnknownEither(schema)(JSON.parse(json))

/**
 * The fields a failed decoding names, as 422 `details` would: the deepest path of each issue (a `null` alternative
 * also fails at the field itself).
 */
const failedPaths = <A>(result: Either.Either<A, ParseResult.ParseError>) => {
  if (Either.isRight(result)) return []
  const paths = [...new Set(ParseResult.ArrayFormatter.formatErrorSync(result.left).map((issue) => issue.path.join(".")))]
  return paths.filter((path) => !paths.some((other) => other.startsWith(`${path}.`)))
}

describe("CreateSubscriberListBody", () => {
  it("takes each form of criterion", () => {
    const body = Either.getOrThrow(decodeJson(
      CreateSubscriberListBody,
      '{"title": "News", "tags": {"format": ["a"], "topics": {"any": ["b"]}}, "links": {"taxon": {"all": ["c", "d"]}}}'
    ))
    expect(JSON.parse(JSON.stringify(body))).toEqual({
      title: "News",
      tags: { format: ["a"], topics: { any: ["b"] } },
      links: { taxon: { all: ["c", "d"] } }
    })
  })

  it("keeps __proto__ and constructor as tag names", () => {
    const body = Either.getOrThrow(
      decodeJson(CreateSubscriberListBody, '{"title": "T", "tags": {"__proto__": ["x"], "constructor": {"all": ["y"]}}}')
    )
    expect(Object.keys(body.tags!)).toEqual(["__proto__", "constructor"])
    expect(body.tags!["__proto__"]).toEqual(["x"])
    expect(Object.getPrototypeOf(body.tags)).toBeNull()
  })

  it("names the criterion of the wrong shape", () => {
    expect(failedPaths(decodeJson(CreateSubscriberListBody, '{"title": "T", "tags": {"format": "guide"}}')))
      .toEqual(["tags.format"])
    const both = failedPaths(
      decodeJson(CreateSubscriberListBody, '{"title": "T", "tags": {"format": {"any": ["a"], "all": ["b"]}}}')
    )
    expect(both.length).toBeGreaterThan(0)
    expect(both.every((path) => path.startsWith("tags.format"))).toBe(true)
    expect(failedPaths(decodeJson(CreateSubscriberListBody, '{"title": "T", "links": {"taxon": {"some": ["a"]}}}')))
      .toEqual(["links.taxon"])
    expect(failedPaths(decodeJson(CreateSubscriberListBody, '{"title": "T", "tags": {"format": [1]}}')))
      .toEqual(["tags.format"])
    expect(failedPaths(decodeJson(CreateSubscriberListBody, '{"title": "T", "tags": {"format": []}}')))
      .toEqual(["tags.format"])
    expect(failedPaths(decodeJson(CreateSubscriberListBody, '{"title": "T", "tags": ["format"]}'))).toEqual(["tags"])
  })

  it("needs something to match on, and a title", () => {
    expect(failedPaths(decodeJson(CreateSubscriberListBody, '{"title": "T"}'))).toEqual(["tags"])
    expect(failedPaths(decodeJson(CreateSubscriberListBody, '{"title": "T", "tags": {}, "document_type": ""}'))).toEqual(["tags"])
    expect(failedPaths(decodeJson(CreateSubscriberListBody, '{"document_type": "guide"}'))).toEqual(["title"])
    expect(Either.isRight(decodeJson(CreateSubscriberListBody, '{"title": "T", "content_id": "c"}'))).toBe(true)
  })
})

describe("CreateNotificationBody", () => {
  it("needs a subject and a body, or a title", () => {
    expect(Either.isRight(decodeJson(CreateNotificationBody, '{"subject": "S", "body": "B"}'))).toBe(true)
    expect(Either.isRight(decodeJson(CreateNotificationBody, '{"title": "T"}'))).toBe(true)
    expect(failedPaths(decodeJson(CreateNotificationBody, '{"subject": "S"}'))).toEqual(["body"])
    expect(failedPaths(decodeJson(CreateNotificationBody, '{"tags": {"format": ["a"]}}'))).toEqual(["subject"])
  })

  it("names a field of the wrong type", () => {
    expect(failedPaths(decodeJson(CreateNotificationBody, '{"title": "T", "urgent": "yes"}'))).toEqual(["urgent"])
    expect(failedPaths(decodeJson(CreateNotificationBody, '{"title": "T", "tags": {"format": "a"}}'))).toEqual(["tags.format"])
    expect(failedPaths(decodeJson(CreateNotificationBody, '{"title": "T", "public_updated_at": "yesterday"}')))
      .toEqual(["public_updated_at"])
  })

  it("reads public_updated_at as an instant", () => {
    const body = Either.getOrThrow(decodeJson(CreateNotificationBody, '{"title": "T", "public_updated_at": "2018-03-01T10:00:00+01:00"}'))
    expect(body.public_updated_at).toEqual(new Date("2018-03-01T09:00:00.000Z"))
  })
})

describe("CreateSubscriptionBody", () => {
  it("takes subscribable_id or subscriber_list_id, as a number or digits, and defaults the frequency", () => {
    const decode = (json: string) => Either.getOrThrow(decodeJson(CreateSubscriptionBody, json))
    expect(decode('{"address": "a@example.com", "subscribable_id": 12}'))
      .toEqual({ address: "a@example.com", subscriber_list_id: 12, frequency: "immediately" })
    expect(decode('{"address": "a@example.com", "subscriber_list_id": "12", "frequency": "weekly"}'))
      .toEqual({ address: "a@example.com", subscriber_list_id: 12, frequency: "weekly" })
  })

  it("refuses no list, two different lists and an unknown frequency", () => {
    expect(failedPaths(decodeJson(CreateSubscriptionBody, '{"address": "a@example.com"}'))).toEqual(["subscriber_list_id"])
    expect(failedPaths(decodeJson(CreateSubscriptionBody, '{"address": "a@example.com", "subscriber_list_id": 1, "subscribable_id": 2}')))
      .toEqual(["subscribable_id"])
    expect(failedPaths(decodeJson(CreateSubscriptionBody, '{"address": "a@example.com", "subscriber_list_id": 1, "frequency": "hourly"}')))
      .toEqual(["frequency"])
  })
})

describe("AuthTokenBody", () => {
  it("takes only absolute paths on the site", () => {
    const valid = (destination: string) =>
      Either.isRight(Schema.decodeUnknownEither(AuthTokenBody)({ address: "a@example.com", destination }))
    expect(valid("/email/manage?x=1")).toBe(true)
    for (const destination of ["//evil.example", "/\\evil.example", "https://evil.example/", "email", "/a\nb", ""]) {
      expect({ destination, valid: valid(destination) }).toEqual({ destination, valid: false })
    }
  })
})

describe("the views", () => {
  it("write timestamps as ISO 8601 in UTC and keep empty type fields", () => {
    const list = new SubscriberList({
      id: 1,
      title: "News",
      slug: "news",
      subscription_url: "http://localhost:3000/email/subscriptions/new?topic_id=news",
      external_delivery_id: "news",
      document_type: "",
      email_document_supertype: "",
      government_document_supertype: "",
      tags: Schema.decodeUnknownSync(CreateSubscriberListBody)({ title: "t", tags: { format: ["a"] } }).tags!,
      links: Object.create(null),
      content_id: null,
      created_at: new Date("2024-03-01T12:00:00.000Z"),
      updated_at: new Date("2024-03-01T12:00:01.000Z")
    })
    expect(Schema.encodeSync(SubscriberList)(list)).toEqual({
      id: 1,
      title: "News",
      slug: "news",
      subscription_url: "http://localhost:3000/email/subscriptions/new?topic_id=news",
      external_delivery_id: "news",
      document_type: "",
      email_document_supertype: "",
      government_document_supertype: "",
      tags: { format: ["a"] },
      links: {},
      content_id: null,
      created_at: "2024-03-01T12:00:00.000Z",
      updated_at: "2024-03-01T12:00:01.000Z"
    })
  })

  it("refuses a subscription view with an unknown frequency", () => {
    expect(() =>
      Schema.decodeUnknownSync(Subscription)({
        id: "8d6f4c9e-3b9a-4a43-9f4e-2f8e1f0b6c11",
        subscriber_id: 1,
        subscriber_list_id: 2,
        frequency: "hourly",
        source: "imported",
        ended_at: null,
        ended_reason: null,
        sso_user_uid: null,
        created_at: "2024-03-01T12:00:00Z",
        updated_at: "2024-03-01T12:00:00Z"
      })
    ).toThrow(/frequency/)
  })
})

describe("AlertsApi", () => {
  it("describes every endpoint of the contract in OpenAPI", () => {
    const spec = OpenApi.fromApi(AlertsApi)
    const operations = Object.entries(spec.paths).flatMap(([path, item]) =>
      (["get", "post", "patch", "delete"] as const).flatMap((method) => {
        const operation = item[method]
        return operation === undefined ? [] : [`${method.toUpperCase()} ${path} ${Object.keys(operation.responses).sort().join(",")}`]
      })
    )
    expect(operations.sort()).toEqual([
      "DELETE /subscribers/{id} 204,400,401,403,404,422",
      "GET /healthcheck 200,400",
      "GET /subscriber-lists 200,400,401,403,404,422",
      "GET /subscriber-lists/{slug} 200,400,401,403,404,422",
      "GET /subscribers/{id}/subscriptions 200,400,401,403,404,422",
      "GET /subscriptions/{id} 200,400,401,403,404,422",
      "PATCH /subscribers/{id} 200,400,401,403,404,422",
      "PATCH /subscriptions/{id} 200,400,401,403,404,422",
      "POST /content-changes 202,400,401,403,409,422",
      "POST /notifications 202,400,401,403,409,422",
      "POST /subscriber-lists 200,201,400,401,403,422",
      "POST /subscribers/auth-token 201,400,401,403,404,422,429",
      "POST /subscriptions 200,201,400,401,403,404,422",
      "POST /subscriptions/auth-token 200,400,401,403,404,422,429",
      "POST /unsubscribe/{id} 204,400,401,403,404,422"
    ])
  })

  it("describes Notify's status callback, which hosts add beside the contract", () => {
    const spec = OpenApi.fromApi(HttpApi.make("host").add(AlertsCallbacksGroup))
    expect(Object.keys(spec.paths["/status-updates"]?.post?.responses ?? {}).sort()).toEqual(["204", "400", "401", "404", "422"])
  })
})

describe("refusalOf", () => {
  const refusal = <A, I>(schema: Schema.Schema<A, I>, json: string) =>
    Either.match(decodeJson(schema, json), {
      onLeft: refusalOf,
      onRight: () => {
        throw new Error("expected the body to be refused")
      }
    })

  it("answers 400 naming a missing required field", () => {
    const refused = refusal(CreateSubscriberListBody, '{"tags": {"format": ["a"]}}')
    expect(refused).toBeInstanceOf(InvalidRequest)
    expect(refused.details).toEqual({ title: ["is missing"] })
    expect(refused.error).toBe("title: is missing")
  })

  it("answers 422 naming each refused value", () => {
    const refused = refusal(
      CreateSubscriberListBody,
      '{"title": "T", "tags": {"format": "guide", "__proto__": {"some": ["x"]}}, "document_type": 3}'
    )
    expect(refused).toBeInstanceOf(UnprocessableEntity)
    expect(Object.keys(refused.details ?? {}).sort()).toEqual(["document_type", "tags.__proto__", "tags.format"])
    expect(refused.details?.["tags.format"]).toEqual([
      "must be a non-empty array of strings, {\"any\": [strings]} or {\"all\": [strings]}"
    ])
    expect(refused.error).toContain("tags.format: must be a non-empty array of strings")
  })

  it("answers 422 for nothing to match on or nothing to send", () => {
    expect(refusal(CreateSubscriberListBody, '{"title": "T"}')).toBeInstanceOf(UnprocessableEntity)
    const nothingToSend = refusal(CreateNotificationBody, '{"subject": "S"}')
    expect(nothingToSend).toBeInstanceOf(UnprocessableEntity)
    expect(nothingToSend.details).toEqual({ body: ["a notification needs a subject and a body, or a title"] })
  })

  it("names the query parameter that is malformed", () => {
    const refused = Either.match(Schema.decodeUnknownEither(SubscriberListQueryParams)({ "tags[k][x]": "v" }), {
      onLeft: refusalOf,
      onRight: () => {
        throw new Error("expected the query to be refused")
      }
    })
    expect(refused).toBeInstanceOf(UnprocessableEntity)
    expect(refused.error).toContain("tags[k][x] must be of the form")
  })
})
