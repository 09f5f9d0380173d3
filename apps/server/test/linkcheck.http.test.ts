import { createHmac, randomBytes } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startFixtureFleet } from "../../../packages/core-linkcheck/test/fixtures/fleet"
import type { FixtureFleet } from "../../../packages/core-linkcheck/test/fixtures/fleet"
import { count, startInProcessServer } from "./inProcessServer"
import type { InProcessServer } from "./inProcessServer"
import { startWebhookReceiver } from "../../../packages/core-linkcheck/test/fixtures/webhookReceiver"
import { LINKCHECK_TOKEN, linkcheckCallerBootstrap, linkcheckFetch, NO_SIGNIN_TOKEN } from "./linkcheckCaller"

/** The link checking API's caller, ensured by each server these tests start. */
let caller: Awaited<ReturnType<typeof linkcheckCallerBootstrap>>
beforeAll(async () => {
  caller = await linkcheckCallerBootstrap()
})
afterAll(() => caller?.remove())

let server: InProcessServer
let fleet: FixtureFleet

beforeAll(async () => {
  fleet = await startFixtureFleet()
  server = await startInProcessServer({ CIVICSTACK_BOOTSTRAP: caller.file, LINKCHECK_ALLOW_PRIVATE_ADDRESSES: "true" })
})
afterAll(async () => {
  await server?.close()
  await fleet?.close()
})

const get = (path: string) => linkcheckFetch(`${server.url}${path}`)
const postBatch = (body: string, contentType = "application/json") =>
  linkcheckFetch(`${server.url}/batch`, { method: "POST", headers: { "content-type": contentType }, body })
// Reports are checked field by field below; `any` keeps those assertions readable.
const json = (response: Response): Promise<any> => response.json()
const checkQuery = (params: Record<string, string>) => `/check?${new URLSearchParams(params)}`

const expectEnvelope = async (response: Response, status: number, mentions: string) => {
  expect(response.status).toBe(status)
  expect(response.headers.get("content-type")).toContain("application/json")
  const body = await response.json() as { error: unknown }
  expect(typeof body.error).toBe("string")
  expect(body.error).toContain(mentions)
  return body
}

/** A uri of exactly `length` characters to a fixture page, random after the path so that it does not compress. */
const longUri = (length: number) => {
  const prefix = `${fleet.http}/ok?`
  return prefix + randomBytes(length).toString("base64url").slice(0, length - prefix.length)
}

const rowCounts = () =>
  Promise.all(["linkcheck.checks", "linkcheck.batches", "linkcheck.batch_links"].map((table) => count(server, table)))

/** Answers 400 naming `field` and saying what is wrong, with every table as it was. */
const expectRefused = async (send: () => Promise<Response>, field: string, problem: string) => {
  const before = await rowCounts()
  const body = await expectEnvelope(await send(), 400, `${field}: ${problem}`)
  expect(body).toHaveProperty(["details", field], expect.stringContaining(problem))
  expect(await rowCounts()).toEqual(before)
}

const NUL = "must not contain NUL characters"
const SURROGATE = "must not contain unpaired surrogates"

const pollBatch = async (id: number, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const report = await (await get(`/batch/${id}`)).json() as { status: string }
    if (report.status === "completed" || Date.now() > deadline) return report as Record<string, any>
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe("who may call the API: a bearer token of a user with signin on link-checker-api", () => {
  const batchBody = JSON.stringify({ uris: ["https://example.org/guarded-batch"] })
  const asked = (authorization: string | undefined) => {
    const headers: Record<string, string> = authorization === undefined ? {} : { authorization }
    return [
      fetch(`${server.url}${checkQuery({ uri: "https://example.org/guarded" })}`, { headers }),
      fetch(`${server.url}/batch`, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: batchBody }),
      fetch(`${server.url}/batch/1`, { headers })
    ]
  }

  it("refuses a request without a usable token with 401, a challenge and the envelope, and changes nothing", async () => {
    const before = await rowCounts()
    for (const authorization of [undefined, "Bearer", `Bearer ${"0".repeat(32)}`, `Basic ${LINKCHECK_TOKEN}`, LINKCHECK_TOKEN]) {
      for (const response of await Promise.all(asked(authorization))) {
        expect(response.headers.get("www-authenticate")).toContain("Bearer")
        await expectEnvelope(response, 401, "")
      }
    }
    expect(await rowCounts()).toEqual(before)
  })

  it("refuses a user without signin on link-checker-api with 403, and lets the health checks through without a token", async () => {
    const before = await rowCounts()
    for (const response of await Promise.all(asked(`Bearer ${NO_SIGNIN_TOKEN}`))) {
      await expectEnvelope(response, 403, "signin")
    }
    expect(await rowCounts()).toEqual(before)
    expect((await fetch(`${server.url}/healthcheck/live`)).status).toBe(200)
    expect((await fetch(`${server.url}/healthcheck/ready`)).status).toBe(200)
  })
})

describe("GET /check", () => {
  it("checks synchronously, answering the report with its keys in order as application/json; charset=utf-8", async () => {
    const response = await get(checkQuery({ uri: `${fleet.http}/ok`, synchronous: "true" }))
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8")
    const report = await response.json() as Record<string, unknown>
    expect(Object.keys(report)).toEqual([
      "uri", "status", "checked", "problem_summary", "errors", "warnings", "danger", "suggested_fix"
    ])
    expect(report).toMatchObject({ uri: `${fleet.http}/ok`, status: "ok", problem_summary: null, errors: [], danger: [] })
    expect(report.checked).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
  })

  it("reports a page that is not found as broken with its summary and fix", async () => {
    const report = await json(await get(checkQuery({ uri: `${fleet.http}/status/404`, synchronous: "true" })))
    expect(report).toMatchObject({ status: "broken", problem_summary: "Page not found" })
    expect(report.errors).toHaveLength(1)
    expect(typeof report.suggested_fix).toBe("string")
  })

  it("reports a string that is not a URL as broken, not as a bad request", async () => {
    const report = await json(await get(checkQuery({ uri: "not a url", synchronous: "true" })))
    expect(report).toMatchObject({ uri: "not a url", status: "broken", problem_summary: "Invalid URL" })
  })

  it("reuses a check within checked_within and makes a new one with 0", async () => {
    const uri = `${fleet.http}/ok?reuse`
    const first = await json(await get(checkQuery({ uri, synchronous: "true" })))
    const again = await json(await get(checkQuery({ uri, synchronous: "true", checked_within: "600" })))
    expect(again).toEqual(first)
    expect(fleet.requestCount("/ok?reuse")).toBe(1)
    await get(checkQuery({ uri, synchronous: "true", checked_within: "0" }))
    expect(fleet.requestCount("/ok?reuse")).toBe(2)
  })

  it("queues a check when not synchronous: pending first, then the result", async () => {
    const uri = `${fleet.http}/status/410?queued`
    const pending = await json(await get(checkQuery({ uri })))
    expect(pending).toMatchObject({ status: "pending", checked: null, errors: [], warnings: [], danger: [] })
    const deadline = Date.now() + 10_000
    let report = pending
    while (report.status === "pending" && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      report = await json(await get(checkQuery({ uri })))
    }
    expect(report).toMatchObject({ status: "broken", problem_summary: "Page not found" })
  })

  it.each([
    [{}, "uri"],
    [{ uri: "" }, "uri"],
    [{ uri: "   " }, "uri"],
    [{ uri: "https://example.org", checked_within: "-1" }, "checked_within"],
    [{ uri: "https://example.org", checked_within: "1.5" }, "checked_within"],
    [{ uri: "https://example.org", checked_within: "soon" }, "checked_within"],
    [{ uri: "https://example.org", synchronous: "yes" }, "synchronous"]
  ])("answers 400 naming the parameter for %j and stores nothing", async (params, field) => {
    const before = await count(server, "linkcheck.checks")
    const body = await expectEnvelope(await get(checkQuery(params)), 400, field)
    expect(body).toHaveProperty("details")
    expect(await count(server, "linkcheck.checks")).toBe(before)
  })
})

describe("long uris, and text that cannot be stored", () => {
  it("GET /check checks a random uri of 2,800 characters and reuses its check", async () => {
    const uri = longUri(2_800)
    expect(uri).toHaveLength(2_800)
    const response = await get(checkQuery({ uri, synchronous: "true" }))
    expect(response.status).toBe(200)
    const report = await json(response)
    expect(report).toMatchObject({ uri, status: "ok", errors: [] })
    expect(await json(await get(checkQuery({ uri, synchronous: "true" })))).toEqual(report)
    expect(fleet.requestCount(uri.slice(fleet.http.length))).toBe(1)
  })

  it("POST /batch accepts random uris of 2,800 characters among others and checks them", async () => {
    const uris = [`${fleet.http}/ok?beside-long`, longUri(2_800), longUri(2_800)]
    const response = await postBatch(JSON.stringify({ uris }))
    expect(response.status).toBe(202)
    const created = await json(response)
    expect(created.links.map((link: { uri: string }) => link.uri)).toEqual(uris)
    const completed = await pollBatch(created.id)
    expect(completed).toMatchObject({ status: "completed", totals: { links: 3, ok: 3 } })
  })

  it("GET /check answers 400 naming uri for a NUL character in it and stores nothing", async () => {
    await expectRefused(() => get(checkQuery({ uri: "https://example.org/a\u0000b" })), "uri", NUL)
    await expectRefused(() => get("/check?uri=https%3A%2F%2Fexample.org%2F%00&synchronous=true"), "uri", NUL)
  })

  // JSON text with the escapes written out, as a client sends them
  it.each([
    ["NUL in a uri", String.raw`{"uris": ["https://example.org/a\u0000b"]}`, "uris.0", NUL],
    ["NUL in a later uri", String.raw`{"uris": ["https://example.org/", "", "\u0000"]}`, "uris.2", NUL],
    ["a lone high surrogate in a uri", String.raw`{"uris": ["https://example.org/", "x\ud800"]}`, "uris.1", SURROGATE],
    ["a lone low surrogate in a uri", String.raw`{"uris": ["https://example.org/\udc00x"]}`, "uris.0", SURROGATE],
    ["swapped surrogates in a uri", String.raw`{"uris": ["https://example.org/\ude00\ud83d"]}`, "uris.0", SURROGATE],
    [
      "NUL in webhook_uri",
      String.raw`{"uris": ["https://example.org/"], "webhook_uri": "https://hooks.example/\u0000"}`,
      "webhook_uri",
      NUL
    ],
    [
      "a lone surrogate in webhook_uri",
      String.raw`{"uris": ["https://example.org/"], "webhook_uri": "https://hooks.example/\ud800"}`,
      "webhook_uri",
      SURROGATE
    ],
    [
      "NUL in webhook_secret_token",
      String.raw`{"uris": ["a"], "webhook_uri": "https://h.example/", "webhook_secret_token": "a\u0000"}`,
      "webhook_secret_token",
      NUL
    ],
    [
      "a lone surrogate in webhook_secret_token",
      String.raw`{"uris": ["a"], "webhook_uri": "https://h.example/", "webhook_secret_token": "\udbff"}`,
      "webhook_secret_token",
      SURROGATE
    ]
  ])("POST /batch answers 400 naming the field for %s and stores nothing", async (_, body, field, problem) => {
    await expectRefused(() => postBatch(body), field, problem)
  })

  it("POST /batch answers 400 for a raw NUL character in a JSON string, which JSON does not allow", async () => {
    const before = await rowCounts()
    const body = `{"uris": ["https://example.org/"], "webhook_secret_token": "a\u0000"}`
    expect(body).toContain("\u0000")
    await expectEnvelope(await postBatch(body), 400, "not valid JSON")
    expect(await rowCounts()).toEqual(before)
  })

  it("accepts characters outside the BMP (surrogate pairs), raw or escaped", async () => {
    const uri = `${fleet.http}/ok?emoji=\u{1F600}`
    expect(await json(await get(checkQuery({ uri, synchronous: "true" })))).toMatchObject({ uri, status: "ok" })

    const receiver = await startWebhookReceiver()
    try {
      const escaped = String.raw`{"uris": ["${fleet.http}/ok?escaped=\ud83d\ude00", "mailto:\ud83d\ude00@example.org"],
        "webhook_uri": "${receiver.url}", "webhook_secret_token": "\ud83d\ude00"}`
      const response = await postBatch(escaped)
      expect(response.status).toBe(202)
      const created = await json(response)
      expect(created.links.map((link: { uri: string }) => link.uri)).toEqual([
        `${fleet.http}/ok?escaped=\u{1F600}`,
        "mailto:\u{1F600}@example.org"
      ])
      await receiver.waitFor(1)
      const [webhook] = receiver.received
      const signature = createHmac("sha1", "\u{1F600}").update(webhook!.body).digest("hex")
      expect(webhook!.headers["x-linkcheckerapi-signature"]).toBe(signature)

      const raw = await postBatch(JSON.stringify({ uris: [`${fleet.http}/ok?raw=\u{1F600}`] }))
      expect(raw.status).toBe(202)
      expect((await json(raw)).links[0].uri).toBe(`${fleet.http}/ok?raw=\u{1F600}`)
    } finally {
      await receiver.close()
    }
  })
})

describe("POST /batch and GET /batch/{id}", () => {
  it("answers 202 in order, completes, and sends exactly one signed webhook; the same links again answer 201", async () => {
    const receiver = await startWebhookReceiver()
    try {
      const uris = [`${fleet.http}/ok?b1`, `${fleet.http}/status/404?b1`, "", `${fleet.http}/ok?b1`, "mailto:a@example.org"]
      const response = await postBatch(JSON.stringify({
        uris,
        webhook_uri: receiver.url,
        webhook_secret_token: "this is a secret key"
      }))
      expect(response.status).toBe(202)
      const created = await json(response)
      expect(created.status).toBe("in_progress")
      expect(created.links.map((link: { uri: string }) => link.uri)).toEqual(uris.filter((uri) => uri !== ""))
      expect(Object.keys(created)).toEqual(["id", "status", "links", "totals", "completed_at"])

      const completed = await pollBatch(created.id)
      expect(completed).toMatchObject({
        id: created.id,
        status: "completed",
        totals: { links: 4, ok: 2, caution: 1, broken: 1, pending: 0, danger: 0 }
      })
      expect(completed.completed_at).toMatch(/Z$/)
      expect(fleet.requestCount("/ok?b1")).toBe(1)

      await receiver.waitFor(1)
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(receiver.received).toHaveLength(1)
      const [webhook] = receiver.received
      const signature = createHmac("sha1", "this is a secret key").update(webhook!.body).digest("hex")
      expect(webhook!.headers["x-linkcheckerapi-signature"]).toBe(signature)
      expect(webhook!.headers["content-type"]).toBe("application/json")
      expect(JSON.parse(webhook!.body.toString())).toEqual(completed)

      const again = await postBatch(JSON.stringify({ uris: uris.slice(0, 2) }))
      expect(again.status).toBe(201)
      expect(await again.json()).toMatchObject({ status: "completed", totals: { links: 2, pending: 0 } })
    } finally {
      await receiver.close()
    }
  })

  it("answers 404 with the JSON error for an unknown batch", async () => {
    for (const id of ["999999", "abc", "0", "-1"]) {
      const response = await get(`/batch/${id}`)
      expect(response.status).toBe(404)
      expect(await response.json()).toEqual({ error: "Not Found" })
    }
  })

  it.each([
    ["not json", "{uris: "],
    ["uris missing", JSON.stringify({})],
    ["uris empty", JSON.stringify({ uris: [] })],
    ["only empty strings", JSON.stringify({ uris: ["", ""] })],
    ["uris not an array", JSON.stringify({ uris: "https://example.org" })],
    ["uris not strings", JSON.stringify({ uris: [1, 2] })],
    ["over 5000 uris", JSON.stringify({ uris: Array.from({ length: 5001 }, (_, i) => `https://example.org/${i}`) })],
    ["checked_within negative", JSON.stringify({ uris: ["https://example.org"], checked_within: -5 })],
    ["checked_within a string", JSON.stringify({ uris: ["https://example.org"], checked_within: "10" })],
    ["priority unknown", JSON.stringify({ uris: ["https://example.org"], priority: "urgent" })],
    ["webhook_uri relative", JSON.stringify({ uris: ["https://example.org"], webhook_uri: "/hooks" })],
    ["webhook_uri not http", JSON.stringify({ uris: ["https://example.org"], webhook_uri: "ftp://example.org/x" })],
    ["body an array", JSON.stringify(["https://example.org"])]
  ])("answers 400 with the error envelope for %s and stores nothing", async (_, body) => {
    const before = [await count(server, "linkcheck.batches"), await count(server, "linkcheck.checks")]
    const response = await postBatch(body)
    await expectEnvelope(response, 400, "")
    expect([await count(server, "linkcheck.batches"), await count(server, "linkcheck.checks")]).toEqual(before)
  })

  it("names the field that is wrong", async () => {
    await expectEnvelope(await postBatch(JSON.stringify({ uris: ["x"], priority: "urgent" })), 400, "priority")
    await expectEnvelope(await postBatch(JSON.stringify({ uris: [] })), 400, "uris")
    await expectEnvelope(
      await postBatch(JSON.stringify({ uris: ["x"], webhook_uri: "nope" })),
      400,
      "webhook_uri"
    )
  })
})
