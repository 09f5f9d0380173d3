import * as HttpApi from "@effect/platform/HttpApi"
import { Either } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { allSlots } from "../src/services/index"
import { parseServerConfig } from "../src/config"
import { publishedDocuments, servedApi } from "../src/http/api"
import { startInProcessServer } from "./inProcessServer"
import type { InProcessServer } from "./inProcessServer"

interface OpenApiDocument {
  readonly openapi: string
  readonly info: { readonly title: string }
  readonly paths: Record<string, Record<string, {
    readonly parameters?: ReadonlyArray<{ readonly name: string; readonly in: string }>
    readonly responses: Record<string, unknown>
  }>>
}

let server: InProcessServer
beforeAll(async () => {
  server = await startInProcessServer()
})
afterAll(() => server?.close())

const slots = allSlots(Either.getOrThrow(parseServerConfig({})))

const fetchDocument = async (name: string) => {
  const response = await fetch(`${server.url}/openapi/${name}.json`)
  expect(response.status).toBe(200)
  expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8")
  return await response.json() as OpenApiDocument
}

describe("API documents", () => {
  it("publishes each service's contract and the health checks as OpenAPI 3.1", async () => {
    for (const { name } of publishedDocuments(slots)) {
      const document = await fetchDocument(name)
      expect(document.openapi).toMatch(/^3\.1\./)
      expect(document.info.title).toContain("civicstack")
    }
  })

  it("describes the link checking endpoints with their parameters and every status they answer", async () => {
    const { paths } = await fetchDocument("linkcheck")
    expect(Object.keys(paths).sort()).toEqual(["/batch", "/batch/{id}", "/check"])
    expect(paths["/check"]!.get!.parameters!.map((parameter) => parameter.name).sort()).toEqual([
      "check_fragments",
      "checked_within",
      "synchronous",
      "uri"
    ])
    expect(Object.keys(paths["/check"]!.get!.responses)).toEqual(expect.arrayContaining(["200", "400"]))
    expect(Object.keys(paths["/batch"]!.post!.responses)).toEqual(expect.arrayContaining(["201", "202", "400"]))
    expect(Object.keys(paths["/batch/{id}"]!.get!.responses)).toEqual(expect.arrayContaining(["200", "404"]))
  })

  it("has every route the server answers in some document", async () => {
    const documented = new Set<string>()
    for (const { name } of publishedDocuments(slots)) {
      for (const [path, methods] of Object.entries((await fetchDocument(name)).paths)) {
        for (const method of Object.keys(methods)) documented.add(`${method.toUpperCase()} ${path}`)
      }
    }
    const served: Array<string> = []
    HttpApi.reflect(servedApi(slots), {
      onGroup: () => undefined,
      onEndpoint: ({ endpoint }) => served.push(`${endpoint.method} ${endpoint.path.replace(/:(\w+)/g, "{$1}")}`)
    })
    expect(served.length).toBeGreaterThan(4)
    expect(served.filter((route) => !documented.has(route))).toEqual([])
  })

  it("shows the documents on /docs from local files only, under a strict Content-Security-Policy", async () => {
    const response = await fetch(`${server.url}/docs`)
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8")
    expect(response.headers.get("content-security-policy")).toContain("script-src 'self'")
    const html = await response.text()
    for (const { name } of publishedDocuments(slots)) expect(html).toContain(`href="/openapi/${name}.json"`)
    const referenced = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]!)
    expect(referenced.filter((url) => !url.startsWith("/"))).toEqual([])
    expect(html).not.toMatch(/<script>(?!<)/)
    for (const url of referenced.filter((url) => url.startsWith("/docs/assets/"))) {
      const asset = await fetch(`${server.url}${url}`)
      expect({ url, status: asset.status }).toEqual({ url, status: 200 })
      const expectedType = url.endsWith(".css") ? "text/css" : url.endsWith(".js") ? "text/javascript" : "image/png"
      expect(asset.headers.get("content-type")).toContain(expectedType)
    }
    const start = await (await fetch(`${server.url}/docs/assets/start.js`)).text()
    expect(start).not.toMatch(/https?:\/\//)
  })
})
