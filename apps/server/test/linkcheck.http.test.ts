/**
 * What the reference server adds in front of the link checking endpoints: the single sign-on's token check and its
 * error envelope for bad input, which names the field and changes nothing. The endpoints' own behaviour is tested in
 * packages/core-linkcheck/test/http.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { count, startInProcessServer } from "./inProcessServer"
import type { InProcessServer } from "./inProcessServer"
import {
  LINKCHECK_ADMIN_TOKEN,
  LINKCHECK_TOKEN,
  linkcheckCallerBootstrap,
  linkcheckFetch,
  NO_SIGNIN_TOKEN,
  OTHER_LINKCHECK_TOKEN
} from "./linkcheckCaller"

/** The link checking API's caller, ensured by each server these tests start. */
let caller: Awaited<ReturnType<typeof linkcheckCallerBootstrap>>
beforeAll(async () => {
  caller = await linkcheckCallerBootstrap()
})
afterAll(() => caller?.remove())

let server: InProcessServer

beforeAll(async () => {
  server = await startInProcessServer({ CIVICSTACK_BOOTSTRAP: caller.file })
})
afterAll(async () => {
  await server?.close()
})

const get = (path: string) => linkcheckFetch(`${server.url}${path}`)
const postBatch = (body: string, contentType = "application/json") =>
  linkcheckFetch(`${server.url}/batch`, { method: "POST", headers: { "content-type": contentType }, body })
const checkQuery = (params: Record<string, string>) => `/check?${new URLSearchParams(params)}`

const expectEnvelope = async (response: Response, status: number, mentions: string) => {
  expect(response.status).toBe(status)
  expect(response.headers.get("content-type")).toContain("application/json")
  const body = await response.json() as { error: unknown }
  expect(typeof body.error).toBe("string")
  expect(body.error).toContain(mentions)
  return body
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
  it.each([
    [{}, "uri"],
    [{ uri: "" }, "uri"],
    [{ uri: "   " }, "uri"],
    [{ uri: "https://example.org", checked_within: "-1" }, "checked_within"],
    [{ uri: "https://example.org", checked_within: "1.5" }, "checked_within"],
    [{ uri: "https://example.org", checked_within: "soon" }, "checked_within"],
    [{ uri: "https://example.org", checked_within: "99999999999999" }, "checked_within"],
    [{ uri: "https://example.org", synchronous: "yes" }, "synchronous"]
  ])("answers 400 naming the parameter for %j and stores nothing", async (params, field) => {
    const before = await count(server, "linkcheck.checks")
    const body = await expectEnvelope(await get(checkQuery(params)), 400, field)
    expect(body).toHaveProperty("details")
    expect(await count(server, "linkcheck.checks")).toBe(before)
  })
})

describe("check_fragments", () => {
  it.each(["yes", "1", "TRUE", ""])("GET /check answers 400 naming check_fragments for %j and stores nothing", async (value) => {
    await expectRefused(
      () => get(checkQuery({ uri: "https://example.org/#x", check_fragments: value })),
      "check_fragments",
      "must be true or false"
    )
  })

  it.each([["a string", "true"], ["a number", 1], ["null", null]])(
    "POST /batch answers 400 naming check_fragments for %s and stores nothing",
    async (_, value) => {
      await expectRefused(
        () => postBatch(JSON.stringify({ uris: ["https://example.org/#x"], check_fragments: value })),
        "check_fragments",
        "must be true or false"
      )
    }
  )

  it("takes true and false on both endpoints, and keeps each link's uri as given", async () => {
    for (const value of ["true", "false"]) {
      const response = await get(checkQuery({ uri: `no scheme ${value}#section`, check_fragments: value, synchronous: "true" }))
      expect(response.status).toBe(200)
      expect(await response.json()).toMatchObject({ uri: `no scheme ${value}#section`, status: "broken" })
    }
    for (const value of [true, false]) {
      const response = await postBatch(JSON.stringify({ uris: [`https://example.org/${value}#a`], check_fragments: value }))
      expect([201, 202]).toContain(response.status)
      expect(await response.json()).toMatchObject({ links: [{ uri: `https://example.org/${value}#a` }] })
    }
  })

  it("is described in the OpenAPI document of both endpoints", async () => {
    interface Schema { readonly $ref?: string; readonly properties?: Record<string, unknown> }
    const document = await (await fetch(`${server.url}/openapi/linkcheck.json`)).json() as {
      paths: Record<string, Record<string, {
        parameters?: Array<{ name: string }>
        requestBody?: { content: Record<string, { schema: Schema }> }
      }>>
      components: { schemas: Record<string, Schema> }
    }
    expect(document.paths["/check"]!.get!.parameters!.map((parameter) => parameter.name)).toContain("check_fragments")
    const body = document.paths["/batch"]!.post!.requestBody!.content["application/json"]!.schema
    const resolved = body.$ref === undefined ? body : document.components.schemas[body.$ref.split("/").pop()!]!
    expect(Object.keys(resolved.properties ?? {})).toContain("check_fragments")
  })
})

describe("text that cannot be stored", () => {
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

})

describe("POST /batch and GET /batch/{id}", () => {
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
    ["checked_within past any date", JSON.stringify({ uris: ["https://example.org"], checked_within: 1e14 })],
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

describe("a batch belongs to the caller who created it", () => {
  const batchAs = (token: string, id: number) =>
    fetch(`${server.url}/batch/${id}`, { headers: { authorization: `Bearer ${token}` } })

  it("answers another caller 404 as for an unknown batch, and shows it to its creator and to an admin", async () => {
    const created = await postBatch(JSON.stringify({ uris: ["mailto:owned@example.org"] }))
    expect(created.status).toBe(202)
    const { id } = await created.json() as { id: number }

    const mine = await batchAs(LINKCHECK_TOKEN, id)
    expect(mine.status).toBe(200)
    const report = await mine.json() as { id: number; links: ReadonlyArray<{ uri: string }> }
    expect(report.links.map((link) => link.uri)).toEqual(["mailto:owned@example.org"])

    const others = await batchAs(OTHER_LINKCHECK_TOKEN, id)
    const unknown = await batchAs(OTHER_LINKCHECK_TOKEN, id + 1_000_000)
    expect(others.status).toBe(404)
    expect(await others.json()).toEqual(await unknown.json())

    const admins = await batchAs(LINKCHECK_ADMIN_TOKEN, id)
    expect(admins.status).toBe(200)
    expect(await admins.json()).toMatchObject({ id, links: [{ uri: "mailto:owned@example.org" }] })
  })
})
