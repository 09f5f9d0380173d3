import { Effect } from "effect"
import * as Net from "node:net"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, testPool } from "@civicstack/kit/testing"
import { startTcpProxy } from "@civicstack/kit/testing"
import type { TcpProxy } from "@civicstack/kit/testing"
import { SqlClient } from "@effect/sql/SqlClient"
import { startInProcessServer } from "./inProcessServer"
import type { InProcessServer } from "./inProcessServer"
import { startCli, stop, waitUntilReady } from "./serverProcess"
import { linkcheckCallerBootstrap, linkcheckFetch } from "./linkcheckCaller"

/** The link checking API's caller, ensured by each server these tests start. */
let caller: Awaited<ReturnType<typeof linkcheckCallerBootstrap>>
beforeAll(async () => {
  caller = await linkcheckCallerBootstrap()
})
afterAll(() => caller?.remove())

interface RawAnswer {
  readonly status: number
  readonly headers: string
  readonly body: string
  readonly writeError: string | undefined
}

/** Sends `POST path` with a chunked body of `totalBytes`, written as fast as the server reads it, and reads the answer. */
const postChunked = (url: string, path: string, totalBytes: number) =>
  new Promise<RawAnswer>((resolve, reject) => {
    const { port } = new URL(url)
    const socket = Net.connect(Number(port), "127.0.0.1")
    let received = ""
    let writeError: string | undefined
    socket.on("data", (chunk) => {
      received += chunk.toString("latin1")
      const headEnd = received.indexOf("\r\n\r\n")
      const length = Number(/content-length: (\d+)/i.exec(received)?.[1] ?? -1)
      if (headEnd !== -1 && length >= 0 && received.length - headEnd - 4 >= length) socket.end()
    })
    socket.on("error", (error: NodeJS.ErrnoException) => { writeError = error.code ?? error.message })
    socket.on("close", () => {
      const [head = "", body = ""] = received.split("\r\n\r\n")
      const status = Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1] ?? 0)
      if (status === 0) return reject(new Error(`no answer (${writeError ?? "closed"})`))
      resolve({ status, headers: head.toLowerCase(), body, writeError })
    })
    const chunk = Buffer.alloc(64 * 1024, "a")
    let sent = 0
    const writeMore = () => {
      while (sent < totalBytes) {
        sent += chunk.length
        socket.write(`${chunk.length.toString(16)}\r\n`)
        socket.write(chunk)
        if (!socket.write("\r\n")) return socket.once("drain", writeMore)
      }
      socket.write("0\r\n\r\n")
    }
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`
    )
    writeMore()
  })

describe("the HTTP host", () => {
  let server: InProcessServer
  beforeAll(async () => {
    server = await startInProcessServer({ CIVICSTACK_BOOTSTRAP: caller.file })
  })
  afterAll(() => server?.close())

  it("does not believe X-Forwarded-Proto when it trusts no proxy: no Strict-Transport-Security over http", async () => {
    const response = await fetch(`${server.url}/healthcheck/live`, { headers: { "x-forwarded-proto": "https" } })
    expect(response.headers.get("strict-transport-security")).toBeNull()
  })

  it("refuses a chunked body over the limit with a 413 envelope that reaches a client still sending, and stays up", async () => {
    const answer = await postChunked(server.url, "/batch", 20 * 1024 * 1024)
    expect(answer.status).toBe(413)
    expect(answer.headers).toContain("content-type: application/json; charset=utf-8")
    expect(answer.body).toContain("larger than 5242880 bytes")
    expect(answer.writeError).toBeUndefined()
    expect((await fetch(`${server.url}/healthcheck/live`)).status).toBe(200)
  })

  it("refuses a declared Content-Length over the limit without reading it", async () => {
    const response = await linkcheckFetch(`${server.url}/batch`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ uris: ["x".repeat(6 * 1024 * 1024)] })
    })
    expect(response.status).toBe(413)
    expect(await response.json()).toEqual({ error: "The request body is larger than 5242880 bytes" })
  })

  it("refuses a body of a type no endpoint takes with 415 at once, a multipart upload included", async () => {
    const form = new FormData()
    form.append("uris", new Blob(["x".repeat(2 * 1024 * 1024)]), "uris.txt")
    const started = Date.now()
    const multipart = await linkcheckFetch(`${server.url}/batch`, { method: "POST", body: form, signal: AbortSignal.timeout(5000) })
    expect(multipart.status).toBe(415)
    expect(await multipart.json()).toEqual({ error: "The request body must be JSON (application/json), not multipart/form-data" })
    expect(Date.now() - started).toBeLessThan(1000)
    const text = await linkcheckFetch(`${server.url}/batch`, { method: "POST", headers: { "content-type": "text/plain" }, body: "https://example.org" })
    expect(text.status).toBe(415)
  })

  it("answers a wrong method on a known path with 405 and Allow, an unknown path with 404; HEAD follows GET", async () => {
    const cases = [
      ["PUT", "/batch", "POST"],
      ["DELETE", "/batch/1", "GET, HEAD"],
      ["OPTIONS", "/check", "GET, HEAD"],
      ["POST", "/healthcheck/ready", "GET, HEAD"]
    ] as const
    for (const [method, path, allow] of cases) {
      const response = await linkcheckFetch(`${server.url}${path}`, { method })
      expect({ method, path, status: response.status, allow: response.headers.get("allow") }).toEqual({
        method,
        path,
        status: 405,
        allow
      })
      expect((await response.json() as { error: string }).error).toContain(`${method} is not allowed`)
    }
    expect((await fetch(`${server.url}/no/such/path`, { method: "PUT" })).status).toBe(404)
    expect((await fetch(`${server.url}/healthcheck/live`, { method: "HEAD" })).status).toBe(200)
  })

  it("says charset=utf-8 on every JSON answer: reports, errors and health", async () => {
    const answers = await Promise.all([
      fetch(`${server.url}/healthcheck/live`),
      fetch(`${server.url}/healthcheck/ready`),
      fetch(`${server.url}/no/such/path`),
      linkcheckFetch(`${server.url}/check`),
      linkcheckFetch(`${server.url}/batch/999`),
      linkcheckFetch(`${server.url}/batch`, { method: "POST", headers: { "content-type": "application/json" }, body: "{" }),
      linkcheckFetch(`${server.url}/batch`, { method: "PUT" })
    ])
    for (const answer of answers) {
      expect(answer.headers.get("content-type")).toBe("application/json; charset=utf-8")
      expect(JSON.stringify(await answer.json())).not.toContain("_tag")
    }
  })
})

describe.skipIf(process.env.TEST_DATABASE_URL === undefined)("the HTTP host when its database fails", () => {
  let database: { url: string; drop: () => Promise<unknown> }
  let proxy: TcpProxy
  beforeAll(async () => {
    database = await createTestDatabase(process.env.TEST_DATABASE_URL!, "host", Effect.void)
    const target = new URL(database.url)
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) })
  })
  afterAll(async () => {
    await proxy?.close()
    await database?.drop()
  })

  const throughProxy = () => {
    const url = new URL(database.url)
    url.host = `127.0.0.1:${proxy.port}`
    return url.toString()
  }

  it("answers 503 with Retry-After while the database is unreachable, and normally once it is back", { timeout: 60_000 }, async () => {
    const server = await startInProcessServer({ CIVICSTACK_BOOTSTRAP: caller.file, DATABASE_URL: throughProxy() })
    try {
      expect((await linkcheckFetch(`${server.url}/batch/1`)).status).toBe(404)
      await proxy.cut()
      for (const path of ["/batch/1", "/check?uri=mailto:a@example.org"]) {
        const response = await linkcheckFetch(`${server.url}${path}`)
        expect(response.status).toBe(503)
        expect(response.headers.get("retry-after")).toBe("5")
        expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8")
        expect((await response.json() as { error: string }).error).toContain("database")
      }
      const ready = await fetch(`${server.url}/healthcheck/ready`)
      expect(ready.status).toBe(503)
      expect(Object.keys(await ready.json() as object)).toEqual(["error"])

      await proxy.restore()
      const deadline = Date.now() + 20_000
      let status = 0
      while (Date.now() < deadline && status !== 404) {
        status = (await linkcheckFetch(`${server.url}/batch/1`)).status
        if (status !== 404) await new Promise((resolve) => setTimeout(resolve, 200))
      }
      expect(status).toBe(404)
    } finally {
      await proxy.restore().catch(() => undefined)
      await server.close()
    }
  })

  it("answers any other failure with 500, the envelope and a request id that the error log names", { timeout: 60_000 }, async () => {
    const dataDir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "civicstack-host-"))
    const server = await startCli(["serve"], { CIVICSTACK_BOOTSTRAP: caller.file, DATABASE_URL: database.url, DATA_DIR: dataDir })
    try {
      await waitUntilReady(server)
      await Effect.runPromise(
        Effect.flatMap(SqlClient, (sql) => sql`ALTER TABLE linkcheck.batch_links RENAME TO batch_links_gone`).pipe(
          Effect.provide(testPool(database.url))
        )
      )
      const response = await linkcheckFetch(`${server.url}/batch`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ uris: ["mailto:a@example.org"] })
      })
      expect(response.status).toBe(500)
      const requestId = response.headers.get("x-request-id")
      expect(requestId).toMatch(/^[0-9a-f-]{36}$/)
      const body = await response.json() as { error: string; details: { request_id: string } }
      expect(body.details.request_id).toBe(requestId)
      const logged = server.output().split("\n").filter((line) => line.includes(requestId!))
      const errors = logged.map((line) => JSON.parse(line) as { logLevel: string; message: string })
        .filter((line) => line.logLevel === "ERROR")
      expect(errors).toEqual([
        expect.objectContaining({ message: expect.stringContaining("Request failed unexpectedly") })
      ])
    } finally {
      await Effect.runPromise(
        Effect.flatMap(SqlClient, (sql) => sql`ALTER TABLE linkcheck.batch_links_gone RENAME TO batch_links`).pipe(
          Effect.provide(testPool(database.url)),
          Effect.ignore
        )
      )
      await stop(server)
      await Fs.rm(dataDir, { recursive: true, force: true })
    }
  })
})

describe("the HTTP host behind a trusted proxy", () => {
  let server: InProcessServer
  beforeAll(async () => {
    server = await startInProcessServer({ CIVICSTACK_BOOTSTRAP: caller.file, TRUST_PROXY: "loopback", SERVICES: "sso" })
  })
  afterAll(() => server?.close())

  const hsts = async (path: string, init: RequestInit = {}) =>
    (await fetch(`${server.url}${path}`, init)).headers.get("strict-transport-security")

  it("sends Strict-Transport-Security on every answer the proxy says came over https, fast answers too", async () => {
    const overHttps = { "x-forwarded-proto": "https" }
    expect(await hsts("/healthcheck/live", { headers: overHttps })).toBe("max-age=31536000; includeSubDomains")
    expect(await hsts("/users/sign_in", { headers: overHttps })).toBe("max-age=31536000; includeSubDomains")
    const tokenRequest = {
      method: "POST",
      headers: { ...overHttps, "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=refresh_token&refresh_token=x"
    }
    expect(await hsts("/oauth/token", tokenRequest)).toBe("max-age=31536000; includeSubDomains")
  })

  it("sends none over plain http, or when the https claim is not the proxy's own", async () => {
    expect(await hsts("/healthcheck/live")).toBeNull()
    expect(await hsts("/healthcheck/live", { headers: { "x-forwarded-proto": "https, http" } })).toBeNull()
  })
})
