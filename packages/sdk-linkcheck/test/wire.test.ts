import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { ManagedRuntime } from "effect"
import { CACHED_PREFIX, FAKE_TOKEN, FakeLinkcheckServer, FORBIDDEN_TOKEN, REFUSED_URI, serverUrl } from "./support/fakeLinkcheckServer"

const asCaller = { authorization: `Bearer ${FAKE_TOKEN}` }

interface WireBatch {
  readonly status: string
  readonly completed_at: string | null
  readonly links: ReadonlyArray<Record<string, unknown>>
  readonly totals: Record<string, unknown>
}

// What the SDK decodes, seen as bytes on the wire: the fake server speaks the contract the SDK is derived from.
describe("the link checking contract on the wire", () => {
  const server = ManagedRuntime.make(FakeLinkcheckServer)
  let baseUrl = ""
  beforeAll(async () => {
    baseUrl = await server.runPromise(serverUrl)
  })
  afterAll(() => server.dispose())

  const postBatch = (uris: ReadonlyArray<string>) =>
    fetch(`${baseUrl}/batch`, {
      method: "POST",
      headers: { ...asCaller, "content-type": "application/json" },
      body: JSON.stringify({ uris })
    })

  it("answers 401 with the envelope without a token, and 403 for a user the service refuses", async () => {
    const anonymous = await fetch(`${baseUrl}/batch/1`)
    expect(anonymous.status).toBe(401)
    expect(await anonymous.json()).toEqual({ error: "A valid bearer token is required" })
    const forbidden = await fetch(`${baseUrl}/batch/1`, { headers: { authorization: `Bearer ${FORBIDDEN_TOKEN}` } })
    expect(forbidden.status).toBe(403)
  })

  it("answers 201 for a batch completed at once, with the report's keys in order and no marker", async () => {
    const response = await postBatch([`${CACHED_PREFIX}wire`])
    expect(response.status).toBe(201)
    expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8")
    const body = (await response.json()) as WireBatch
    const [link] = body.links
    expect(Object.keys(body)).toEqual(["id", "status", "links", "totals", "completed_at"])
    expect(Object.keys(link ?? {})).toEqual([
      "uri",
      "status",
      "checked",
      "problem_summary",
      "errors",
      "warnings",
      "danger",
      "suggested_fix"
    ])
    expect(Object.keys(body.totals)).toEqual(["links", "ok", "caution", "broken", "pending", "danger"])
    expect(body.status).toBe("completed")
    expect(body.completed_at).toBe("2017-04-12T18:47:16Z")
    expect(link?.["checked"]).toBe("2017-04-12T18:47:16Z")
  })

  it("answers 202 for a batch in progress", async () => {
    const response = await postBatch(["https://example.org/wire"])
    expect(response.status).toBe(202)
    const body = (await response.json()) as WireBatch
    expect(body).toMatchObject({ status: "in_progress", completed_at: null })
    expect(body).not.toHaveProperty("outcome")
  })

  it("answers 404 with the error envelope for an unknown batch", async () => {
    const response = await fetch(`${baseUrl}/batch/987654`, { headers: asCaller })
    expect(response.status).toBe(404)
    expect(await response.text()).toBe(`{"error":"Not Found"}`)
  })

  it("answers 400 with the error envelope for a refused request", async () => {
    const response = await fetch(`${baseUrl}/check?uri=${encodeURIComponent(REFUSED_URI)}`, { headers: asCaller })
    expect(response.status).toBe(400)
    expect(await response.json()).toEqual({ error: "uri: is refused by this service", details: { uri: "is refused" } })
  })
})
