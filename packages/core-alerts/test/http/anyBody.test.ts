import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ManagedRuntime, Redacted } from "effect"
import fc from "fast-check"
import { memoryService } from "../fixtures/backends"
import { baseUrl, servedOver } from "./server"

/** One server over memory for the whole file: a property runs many requests against it. */
const CALLBACK_TOKEN = "callback-token-0123456789"
const server = ManagedRuntime.make(servedOver(memoryService({
  authTokenSecret: Redacted.make("k".repeat(40)),
  statusCallbackToken: Redacted.make(CALLBACK_TOKEN)
})))
let url = ""
beforeAll(async () => {
  url = await server.runPromise(baseUrl)
  const seed = (path: string, body: unknown) =>
    fetch(`${url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
  await seed("/subscriber-lists", { title: "Guides", tags: { format: ["guide"] } })
  await seed("/subscriptions", { address: "ann@example.org", subscriber_list_id: 1 })
})
afterAll(() => server.dispose())

const ENDPOINTS: ReadonlyArray<readonly [string, string]> = [
  ["POST", "/subscriber-lists"],
  ["POST", "/notifications"],
  ["POST", "/content-changes"],
  ["POST", "/subscriptions"],
  ["PATCH", "/subscribers/1"],
  ["POST", "/subscribers/auth-token"],
  ["POST", "/status-updates"],
  ["POST", "/subscriptions/auth-token"]
]

/** JSON values, and objects with the endpoints' own field names holding any JSON value. */
const bodies = fc.oneof(
  fc.jsonValue(),
  fc.dictionary(
    fc.constantFrom(
      "title", "tags", "links", "subject", "body", "address", "subscriber_list_id", "subscribable_id", "frequency",
      "new_address", "destination", "redirect", "content_id", "base_path", "public_updated_at", "urgent", "__proto__",
      "id", "reference", "to", "status", "created_at", "completed_at", "sent_at", "notification_type", "topic_id"
    ),
    fc.jsonValue({ maxDepth: 3 })
  )
)

describe("any JSON body", () => {
  it("is answered below 500, and every refusal is the JSON envelope", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ENDPOINTS), bodies, async ([method, path], body) => {
        const response = await fetch(`${url}${path}`, {
          method,
          headers: { "content-type": "application/json", authorization: `Bearer ${CALLBACK_TOKEN}` },
          body: JSON.stringify(body)
        })
        const text = await response.text()
        expect(response.status, `${method} ${path} ${JSON.stringify(body)} -> ${text}`).toBeLessThan(500)
        if (response.status >= 400) {
          expect(response.headers.get("content-type")).toContain("application/json")
          expect(typeof (JSON.parse(text) as { error?: unknown }).error).toBe("string")
        }
      }),
      { numRuns: 300 }
    )
  }, 60_000)
})
