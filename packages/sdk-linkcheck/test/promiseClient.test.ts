import { fetchThatHangs } from "@civicstack/kit/testing"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { ManagedRuntime } from "effect"
import {
  BatchNotFound,
  createLinkcheckClient,
  Forbidden,
  InvalidRequest,
  type LinkcheckPromiseClient,
  LinkcheckClientError,
  Unauthenticated,
  WaitTimeout
} from "../src"
import {
  CACHED_PREFIX,
  CHECKED_AT,
  FakeLinkcheck,
  FakeLinkcheckServer,
  NEVER_COMPLETING_URI,
  READS_IN_PROGRESS,
  FAKE_TOKEN,
  FORBIDDEN_TOKEN,
  REFUSED_URI,
  serverUrl
} from "./support/fakeLinkcheckServer"

describe("createLinkcheckClient against a server of the same contract", () => {
  const server = ManagedRuntime.make(FakeLinkcheckServer)
  const readsOf = (id: number) => server.runPromise(FakeLinkcheck.use((fake) => fake.readsOf(id)))
  let client: LinkcheckPromiseClient
  beforeAll(async () => {
    client = createLinkcheckClient({ baseUrl: await server.runPromise(serverUrl), bearerToken: FAKE_TOKEN })
  })
  afterAll(async () => {
    await client.close()
    await server.dispose()
  })

  it("checks a link", async () => {
    const report = await client.check("https://example.org/promise", { synchronous: true })
    expect(report).toMatchObject({ uri: "https://example.org/promise", status: "ok", checked: CHECKED_AT })
  })

  it("rejects with the InvalidRequest class", async () => {
    const refused = client.check(REFUSED_URI)
    await expect(refused).rejects.toBeInstanceOf(InvalidRequest)
    await expect(refused).rejects.toMatchObject({ _tag: "InvalidRequest", error: "uri: is refused by this service" })
    await expect(client.createBatch([])).rejects.toBeInstanceOf(InvalidRequest)
  })

  it("sends its bearer token; without one, or with one the service refuses, it rejects with Unauthenticated or Forbidden", async () => {
    const baseUrl = await server.runPromise(serverUrl)
    const anonymous = createLinkcheckClient({ baseUrl })
    const wrong = createLinkcheckClient({ baseUrl, bearerToken: "not-a-known-token" })
    const forbidden = createLinkcheckClient({ baseUrl, bearerToken: FORBIDDEN_TOKEN })
    try {
      await expect(anonymous.check("https://example.org/a")).rejects.toBeInstanceOf(Unauthenticated)
      await expect(wrong.createBatch(["https://example.org/a"])).rejects.toBeInstanceOf(Unauthenticated)
      await expect(forbidden.getBatch(1)).rejects.toBeInstanceOf(Forbidden)
      await expect(forbidden.getBatch(1)).rejects.toMatchObject({ error: "No signin permission on link-checker-api" })
    } finally {
      await Promise.all([anonymous.close(), wrong.close(), forbidden.close()])
    }
  })

  it("creates batches, telling 201 from 202", async () => {
    const completed = await client.createBatch([`${CACHED_PREFIX}promise`])
    const accepted = await client.createBatch(["https://example.org/promise-batch"], { priority: "low" })
    expect(completed).toMatchObject({ completedAtOnce: true, status: "completed", completed_at: CHECKED_AT })
    expect(accepted).toMatchObject({ completedAtOnce: false, status: "in_progress", completed_at: null })
  })

  it("rejects with the BatchNotFound class for an unknown batch", async () => {
    await expect(client.getBatch(987_656)).rejects.toBeInstanceOf(BatchNotFound)
  })

  it("waits for a batch to complete", async () => {
    const { id } = await client.createBatch(["https://example.org/promise-wait"])
    const report = await client.waitForBatch(id, { pollInterval: "5 millis" })
    expect(report.status).toBe("completed")
    expect(await readsOf(id)).toBe(READS_IN_PROGRESS + 1)
  })

  it("rejects with the WaitTimeout class when the batch does not complete in time", async () => {
    const { id } = await client.createBatch([NEVER_COMPLETING_URI])
    const waiting = client.waitForBatch(id, { pollInterval: "5 millis", timeout: "50 millis" })
    await expect(waiting).rejects.toBeInstanceOf(WaitTimeout)
    await expect(waiting).rejects.toMatchObject({ batchId: id })
  })
})

describe("createLinkcheckClient with a custom fetch", () => {
  const respondWith = (response: () => Response): typeof fetch => () => Promise.resolve(response())

  it("sends every request through the given fetch", async () => {
    const requested: Array<string> = []
    const fetchSpy: typeof fetch = (input) => {
      requested.push(input instanceof Request ? `${input.method} ${input.url}` : String(input))
      return Promise.resolve(Response.json({ error: "Not Found" }, { status: 404 }))
    }
    const client = createLinkcheckClient({ baseUrl: "https://links.example/api", fetch: fetchSpy })
    await expect(client.getBatch(7)).rejects.toBeInstanceOf(BatchNotFound)
    await client.close()
    expect(requested).toEqual([expect.stringContaining("https://links.example/api/batch/7")])
  })

  it("rejects with LinkcheckClientError when the service cannot be reached", async () => {
    const client = createLinkcheckClient({
      baseUrl: "https://links.example",
      fetch: () => Promise.reject(new TypeError("fetch failed"))
    })
    const failing = client.check("https://example.org/")
    await expect(failing).rejects.toBeInstanceOf(LinkcheckClientError)
    await expect(failing).rejects.toMatchObject({ reason: "Transport" })
    await client.close()
  })

  it("rejects with LinkcheckClientError for a body outside the contract", async () => {
    const client = createLinkcheckClient({
      baseUrl: "https://links.example",
      fetch: respondWith(() => Response.json({ uri: "https://example.org/", status: "fine" }))
    })
    const failing = client.check("https://example.org/")
    await expect(failing).rejects.toBeInstanceOf(LinkcheckClientError)
    await expect(failing).rejects.toMatchObject({ reason: "UnexpectedResponse" })
    await expect(failing).rejects.toThrow(/does not match its contract/)
    await client.close()
  })

  it("rejects with LinkcheckClientError carrying the status of an unexpected answer", async () => {
    const client = createLinkcheckClient({
      baseUrl: "https://links.example",
      fetch: respondWith(() => new Response("Bad Gateway", { status: 502 }))
    })
    await expect(client.getBatch(1)).rejects.toMatchObject({ _tag: "LinkcheckClientError", reason: "UnexpectedResponse", status: 502 })
    await client.close()
  })

  it("rejects calls in flight and calls after close() with an AbortError", async () => {
    const { fetch, wasCalled } = fetchThatHangs()
    const client = createLinkcheckClient({ baseUrl: "https://links.example", fetch })
    const inFlight = client.waitForBatch(1)
    await wasCalled
    await client.close()
    await expect(inFlight).rejects.toMatchObject({ name: "AbortError" })
    await expect(client.check("https://example.org/")).rejects.toMatchObject({ name: "AbortError" })
  })
})
