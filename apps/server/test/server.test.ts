import * as Fs from "node:fs/promises"
import * as Http from "node:http"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startCli, stop, waitUntilReady } from "./serverProcess"

let dataDir: string
beforeAll(async () => {
  dataDir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "civicstack-server-"))
})
afterAll(() => Fs.rm(dataDir, { recursive: true, force: true }))

const logLines = (output: string) =>
  output.split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line) as Record<string, unknown>)

describe("the reference server on the embedded database", () => {
  it("becomes ready, answers health checks, refuses a second process on its data, exits 0 on SIGTERM, and restarts on the same data", { timeout: 120_000 }, async () => {
    const first = await startCli(["serve"], { DATA_DIR: dataDir })
    try {
      await waitUntilReady(first)

      const live = await fetch(`${first.url}/healthcheck/live`)
      expect(live.status).toBe(200)
      expect(await live.json()).toEqual({ status: "ok" })

      const ready = await fetch(`${first.url}/healthcheck/ready`)
      expect(ready.status).toBe(200)
      expect(await ready.json()).toMatchObject({ status: "ok", database: "ok", queues: expect.any(Array) })

      const unknown = await fetch(`${first.url}/no/such/page`)
      expect(unknown.status).toBe(404)
      expect(await unknown.json()).toEqual({ error: "Not Found" })

      const second = await startCli(["serve"], { DATA_DIR: dataDir })
      expect(await second.exited).not.toBe(0)
      expect(second.output()).toContain(Path.join(dataDir, "pglite"))
      expect(second.output()).toContain(String(first.child.pid))
    } finally {
      expect(await stop(first)).toBe(0)
    }

    const logs = logLines(first.output())
    expect(logs.length).toBeGreaterThan(0)
    expect(logs.every((line) => typeof line.message !== "undefined" && typeof line.logLevel === "string")).toBe(true)

    const again = await startCli(["serve"], { DATA_DIR: dataDir })
    try {
      await waitUntilReady(again)
    } finally {
      expect(await stop(again)).toBe(0)
    }
  })

  it("closes idle keep-alive connections on SIGTERM instead of waiting for the clients", { timeout: 90_000 }, async () => {
    const server = await startCli(["serve"], { DATA_DIR: Path.join(dataDir, "keepalive"), SHUTDOWN_GRACE_SECONDS: "60" })
    await waitUntilReady(server)
    const agent = new Http.Agent({ keepAlive: true, keepAliveMsecs: 60_000 })
    await new Promise<void>((resolve, reject) =>
      Http.get(`${server.url}/healthcheck/live`, { agent }, (response) => {
        response.resume()
        response.on("end", resolve)
      }).on("error", reject)
    )
    const stoppedAt = Date.now()
    expect(await stop(server)).toBe(0)
    expect(Date.now() - stoppedAt).toBeLessThan(20_000)
    agent.destroy()
  })

  it("answers a request on a connection opened before SIGTERM at once, with connection: close, then exits 0", { timeout: 90_000 }, async () => {
    const server = await startCli(["serve"], { DATA_DIR: Path.join(dataDir, "opened-before"), SHUTDOWN_GRACE_SECONDS: "60" })
    await waitUntilReady(server)
    const socket = Net.connect(Number(new URL(server.url).port), "127.0.0.1")
    await new Promise((resolve) => socket.once("connect", resolve))
    let answer = ""
    socket.on("data", (chunk: Buffer) => { answer += chunk.toString() })
    const closed = new Promise((resolve) => socket.once("close", resolve))

    server.child.kill("SIGTERM")
    await new Promise((resolve) => setTimeout(resolve, 300))
    const askedAt = Date.now()
    socket.write("GET /healthcheck/live HTTP/1.1\r\nHost: localhost\r\n\r\n")
    await closed
    expect(Date.now() - askedAt).toBeLessThan(10_000)
    expect(answer).toMatch(/^HTTP\/1\.1 200 /)
    expect(answer.toLowerCase()).toContain("connection: close")
    expect(await server.exited).toBe(0)
  })

  it("refuses to start with bad configuration, naming each bad variable", async () => {
    const server = await startCli(["serve"], { PORT: "not-a-port", LOG_LEVEL: "loud", DATA_DIR: dataDir })
    expect(await server.exited).toBe(1)
    expect(server.output()).toContain("PORT must be a whole number from 0 to 65535 (got \"not-a-port\")")
    expect(server.output()).toContain("LOG_LEVEL must be one of")
  })

  it("migrate applies the migrations and exits", async () => {
    const run = await startCli(["migrate"], { DATA_DIR: Path.join(dataDir, "migrate-only") })
    expect(await run.exited).toBe(0)
  })
})

describe.runIf(process.env.TEST_DATABASE_URL)("the reference server on PostgreSQL", () => {
  it("two copies on one database both become ready", { timeout: 90_000 }, async () => {
    const env = { DATABASE_URL: process.env.TEST_DATABASE_URL ?? "" }
    const copies = await Promise.all([startCli(["serve"], env), startCli(["serve"], env)])
    try {
      await Promise.all(copies.map((copy) => waitUntilReady(copy)))
    } finally {
      expect(await Promise.all(copies.map(stop))).toEqual([0, 0])
    }
  })
})
