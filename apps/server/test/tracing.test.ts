/**
 * With `OTEL_EXPORTER_OTLP_ENDPOINT` set, spans go to an OTLP/HTTP receiver: a batch request's span with the SQL
 * statements under it, the inspection of its link, and the webhook job, whose span links back to the request.
 */
import { createServer, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import type { RecordedSpan } from "@civicstack/kit/testing"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type InProcessServer, startInProcessServer } from "./inProcessServer"
import { linkcheckCallerBootstrap, linkcheckFetch } from "./linkcheckCaller"

interface ReceivedSpan extends Omit<RecordedSpan, "attributes"> {
  readonly service: string
  readonly kind: number
  readonly attributes: Record<string, unknown>
}

interface OtlpAttribute {
  readonly key: string
  readonly value: Record<string, unknown>
}

const attributesOf = (list: ReadonlyArray<OtlpAttribute> = []) =>
  Object.fromEntries(list.map(({ key, value }) => [key, Object.values(value)[0]]))

const SERVER_KIND = 2
const CLIENT_KIND = 3
const CONSUMER_KIND = 5

const readBody = (request: IncomingMessage) =>
  new Promise<Buffer>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => resolve(Buffer.concat(chunks)))
    request.on("error", reject)
  })

const listen = async (server: Server) => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** An OTLP/HTTP receiver taking JSON, as a collector does on `/v1/traces`. */
const received: Array<ReceivedSpan> = []
const exports: Array<{ readonly path: string; readonly contentType: string | undefined; readonly bytes: number }> = []
const receiver = createServer(async (request, response) => {
  const body = await readBody(request)
  exports.push({ path: request.url ?? "", contentType: request.headers["content-type"], bytes: body.length })
  if (request.headers["content-type"] !== "application/json") return void response.writeHead(200).end()
  const document = JSON.parse(body.toString("utf8"))
  for (const resourceSpans of document.resourceSpans) {
    const service = attributesOf(resourceSpans.resource.attributes)["service.name"] as string
    for (const scopeSpans of resourceSpans.scopeSpans) {
      for (const span of scopeSpans.spans) {
        received.push({
          service,
          name: span.name,
          kind: span.kind,
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId,
          links: span.links.map((link: ReceivedSpan) => ({ traceId: link.traceId, spanId: link.spanId })),
          attributes: attributesOf(span.attributes)
        })
      }
    }
  }
  response.writeHead(200, { "content-type": "application/json" }).end("{}")
})

/** The website the batch links to, and the batch's webhook. */
const webhooks: Array<string> = []
const site = createServer(async (request, response) => {
  if (request.method === "POST") {
    webhooks.push((await readBody(request)).toString("utf8"))
    return void response.writeHead(200).end()
  }
  response.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>Page</title>")
})

let caller: Awaited<ReturnType<typeof linkcheckCallerBootstrap>>
let server: InProcessServer | undefined
let receiverUrl: string
let siteUrl: string
beforeAll(async () => {
  caller = await linkcheckCallerBootstrap()
  receiverUrl = await listen(receiver)
  siteUrl = await listen(site)
  server = await startInProcessServer({
    CIVICSTACK_BOOTSTRAP: caller.file,
    OTEL_EXPORTER_OTLP_ENDPOINT: `${receiverUrl}/`,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    LINKCHECK_ALLOW_PRIVATE_ADDRESSES: "true"
  })
})
afterAll(async () => {
  await server?.close()
  await caller?.remove()
  receiver.close()
  site.close()
})

const eventually = async (check: () => boolean, what: string) => {
  for (let tries = 0; tries < 300; tries++) {
    if (check()) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`Timed out waiting for ${what}`)
}

describe("traces", () => {
  it("follow a batch from its request through its statements to the webhook job linked to it", async () => {
    const running = server!
    expect((await fetch(`${running.url}/healthcheck/ready`)).status).toBe(200)
    const answer = await linkcheckFetch(`${running.url}/batch`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ uris: [`${siteUrl}/guide?token=page-query-7f3a`], webhook_uri: `${siteUrl}/hook?key=hook-query-9c1e` })
    })
    expect(answer.status).toBe(202)
    const checked = `${siteUrl}/guide?checked-query=1`
    expect((await linkcheckFetch(`${running.url}/check?uri=${encodeURIComponent(checked)}`)).status).toBe(200)
    await eventually(() => webhooks.length === 1, "the webhook")
    // stopping the server sends the spans not yet sent
    server = undefined
    await running.close()

    expect(exports.length).toBeGreaterThan(0)
    expect(exports.every((sent) => sent.path === "/v1/traces" && sent.contentType === "application/json")).toBe(true)
    expect(new Set(received.map((span) => span.service))).toEqual(new Set(["civicstack"]))

    const request = received.find((span) => span.name === "POST /batch")!
    expect(request).toMatchObject({ kind: SERVER_KIND, parentSpanId: undefined })
    expect(request.attributes).toMatchObject({ "http.request.method": "POST", "http.response.status_code": 202 })
    const inTrace = (span: ReceivedSpan) => span.traceId === request.traceId
    const batchInsert = received.find((span) =>
      inTrace(span) && span.name === "sql.execute" && String(span.attributes["db.query.text"]).includes("INSERT INTO linkcheck.batches")
    )
    expect(batchInsert).toBeDefined()

    const job = received.find((span) => span.name === "job linkcheck.webhook")!
    expect(job).toMatchObject({ kind: CONSUMER_KIND, parentSpanId: undefined })
    expect(job.traceId).not.toBe(request.traceId)
    expect(job.links).toHaveLength(1)
    expect(received.filter(inTrace).map((span) => span.spanId)).toContain(job.links[0]!.spanId)
    expect(job.links[0]!.traceId).toBe(request.traceId)
    const delivery = received.find((span) => span.parentSpanId === job.spanId && span.name.startsWith("POST "))!
    expect(delivery.name).toBe(`POST ${new URL(siteUrl).host}`)
    expect(delivery.kind).toBe(CLIENT_KIND)
    // the job's own statements are its children
    expect(received.some((span) => span.parentSpanId === job.spanId && span.name === "sql.execute")).toBe(true)
    expect(delivery.attributes).toMatchObject({ "http.response.status_code": 200, "server.address": "127.0.0.1" })

    const inspection = received.find((span) => span.name === "linkcheck.inspect")!
    expect(inspection.attributes).toMatchObject({ "server.address": "127.0.0.1", "linkcheck.status": "ok" })

    const check = received.find((span) => span.name === "GET /check")!
    expect(check.attributes["url.full"]).toBe(`${running.url}/check`)
    expect(check.attributes["url.query"]).toBeUndefined()

    // what no one asked for is left out: statements of background loops alone, and probes
    expect(received.filter((span) => span.name.startsWith("sql.") && span.parentSpanId === undefined)).toEqual([])
    expect(received.some((span) => span.name.includes("/healthcheck/"))).toBe(false)
    // a link's or webhook's path and query stay out of the spans, as does a request's query
    expect(JSON.stringify(received)).not.toMatch(/page-query|hook-query|\/guide|\/hook|checked-query/)
  }, 60_000)

  it("sends OTLP's protobuf encoding unless told otherwise", async () => {
    exports.length = 0
    const traced = await startInProcessServer({
      CIVICSTACK_BOOTSTRAP: caller.file,
      SERVICES: "linkcheck",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiverUrl}/otlp/spans`
    })
    expect((await linkcheckFetch(`${traced.url}/batch/1`)).status).toBe(404)
    await traced.close()
    expect(exports.length).toBeGreaterThan(0)
    expect(exports.every((sent) => sent.path === "/otlp/spans" && sent.contentType === "application/x-protobuf")).toBe(true)
    expect(exports.every((sent) => sent.bytes > 0)).toBe(true)
  }, 60_000)
})
