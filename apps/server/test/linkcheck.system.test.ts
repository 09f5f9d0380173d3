import { Effect } from "effect"
import * as Fs from "node:fs/promises"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startFixtureFleet } from "../../../packages/core-linkcheck/test/fixtures/fleet"
import type { FixtureFleet } from "../../../packages/core-linkcheck/test/fixtures/fleet"
import { startWebhookReceiver } from "../../../packages/core-linkcheck/test/fixtures/webhookReceiver"
import { createTestDatabase } from "@civicstack/kit/testing"
import { startTcpProxy } from "@civicstack/kit/testing"
import { startCli, stop, waitUntilReady } from "./serverProcess"
import type { ServerProcess } from "./serverProcess"
import { LINKCHECK_TOKEN, linkcheckCallerBootstrap, linkcheckFetch } from "./linkcheckCaller"

/** The link checking API's caller, ensured by each server these tests start. */
let caller: Awaited<ReturnType<typeof linkcheckCallerBootstrap>>
beforeAll(async () => {
  caller = await linkcheckCallerBootstrap()
})
afterAll(() => caller?.remove())

/**
 * The link checking service as operators meet it: real server processes killed, stopped and cut off from their
 * database in the middle of a batch, and sent what no client should send.
 */

let fleet: FixtureFleet
let scratch: string
beforeAll(async () => {
  fleet = await startFixtureFleet()
  scratch = await Fs.mkdtemp(Path.join(Os.tmpdir(), "civicstack-system-"))
})
afterAll(async () => {
  await fleet?.close()
  await Fs.rm(scratch, { recursive: true, force: true })
})

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const serve = async (env: Record<string, string>) => {
  const server = await startCli(["serve"], {
    CIVICSTACK_BOOTSTRAP: caller.file,
    LINKCHECK_ALLOW_PRIVATE_ADDRESSES: "true",
    LINKCHECK_CONCURRENCY: "8",
    LINKCHECK_PER_HOST_CONCURRENCY: "8",
    SHUTDOWN_GRACE_SECONDS: "20",
    ...env
  })
  await waitUntilReady(server, 60_000)
  return server
}

const postBatch = async (server: ServerProcess, body: Record<string, unknown>) => {
  const response = await linkcheckFetch(`${server.url}/batch`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  expect(response.status).toBe(202)
  return ((await response.json()) as { id: number }).id
}

interface BatchState {
  readonly status: string
  readonly totals: { readonly links: number; readonly ok: number; readonly pending: number }
}

const batchOf = async (server: ServerProcess, id: number) =>
  (await (await linkcheckFetch(`${server.url}/batch/${id}`)).json()) as BatchState

const waitForCompletion = async (server: ServerProcess, id: number, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const batch = await batchOf(server, id).catch(() => undefined)
    if (batch?.status === "completed") return batch
    if (Date.now() > deadline) {
      throw new Error(`batch ${id} not completed in ${timeoutMs} ms: ${JSON.stringify(batch?.totals)}\n${server.output().split("\n").filter((line) => !line.includes("Sent HTTP response")).join("\n").slice(-8000)}`)
    }
    await pause(200)
  }
}

/** Links of one run, each answering after `ms`, and how often the fleet was asked for each. */
const linksOf = (run: string, count: number, ms: number) => {
  const paths = Array.from({ length: count }, (_, n) => `/slow?ms=${ms}&${run}=${n}`)
  return {
    uris: paths.map((path) => `${fleet.http}${path}`),
    requested: () => paths.filter((path) => fleet.requestCount(path) > 0).length,
    mostRequests: () => Math.max(...paths.map((path) => fleet.requestCount(path)))
  }
}

/** The webhook arrives, and no second one follows. */
const expectOneWebhook = async (receiver: Awaited<ReturnType<typeof startWebhookReceiver>>) => {
  await receiver.waitFor(1)
  await pause(1500)
  expect(receiver.received).toHaveLength(1)
}

const untilRequested = async (links: ReturnType<typeof linksOf>, atLeast: number, timeoutMs = 60_000) => {
  const deadline = Date.now() + timeoutMs
  while (links.requested() < atLeast) {
    if (Date.now() > deadline) throw new Error(`only ${links.requested()} of ${atLeast} links requested in ${timeoutMs} ms`)
    await pause(20)
  }
}

describe("link checking on the embedded database, as operators meet it", () => {
  it("answers a multipart upload that never ends with 415 at once, and SIGTERM during it exits within the grace period", { timeout: 90_000 }, async () => {
    const server = await serve({ DATA_DIR: Path.join(scratch, "upload"), SHUTDOWN_GRACE_SECONDS: "3" })
    const { port } = new URL(server.url)
    const socket = Net.connect(Number(port), "127.0.0.1")
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()))
    let answer = ""
    socket.on("data", (chunk: Buffer) => {
      answer += chunk.toString("latin1")
    })
    socket.on("error", () => undefined)
    const sentAt = Date.now()
    socket.write([
      "POST /batch HTTP/1.1",
      `Host: 127.0.0.1:${port}`,
      `Authorization: Bearer ${LINKCHECK_TOKEN}`,
      "Content-Type: multipart/form-data; boundary=x",
      "Content-Length: 100000000",
      "",
      "--x\r\nContent-Disposition: form-data; name=\"uris\"\r\n\r\n"
    ].join("\r\n"))
    // the client keeps sending, a little at a time, as a slow upload would
    const drip = setInterval(() => socket.write("https://example.org/\n"), 100)
    try {
      // at once, not after the body: a generous bound on a loaded machine, where a hang would last for ever
      while (!answer.includes("\r\n\r\n") && Date.now() - sentAt < 5_000) await pause(20)
      expect(answer).toMatch(/^HTTP\/1\.1 415 /)
      expect(Date.now() - sentAt).toBeLessThan(3_000)
      const stoppedAt = Date.now()
      expect(await stop(server)).toBe(0)
      expect(Date.now() - stoppedAt).toBeLessThan(3_000 + 2_000)
    } finally {
      clearInterval(drip)
      socket.destroy()
    }
  })

  it("logs no webhook secret, token or URI query value, even at debug level", { timeout: 120_000 }, async () => {
    const receiver = await startWebhookReceiver([400])
    const server = await serve({ DATA_DIR: Path.join(scratch, "logs"), LOG_LEVEL: "debug" })
    const secrets = ["uri-query-secret", "webhook-query-secret", "webhook-signing-secret-0123456789", "userinfo-secret", LINKCHECK_TOKEN]
    try {
      const id = await postBatch(server, {
        uris: [`${fleet.http}/ok?session=uri-query-secret`, `http://someone:userinfo-secret@127.0.0.1:${fleet.refusedPort.split(":").at(-1)}/`],
        webhook_uri: `${receiver.url}?key=webhook-query-secret`,
        webhook_secret_token: "webhook-signing-secret-0123456789"
      })
      await waitForCompletion(server, id, 60_000)
      const checked = await linkcheckFetch(`${server.url}/check?${new URLSearchParams({ uri: `${fleet.http}/ok?token=uri-query-secret`, synchronous: "true" })}`)
      expect(checked.status).toBe(200)
      await receiver.waitFor(1)
      // the receiver refused it: the sender logs that, naming the webhook's URI
      for (let waited = 0; waited < 50 && !server.output().includes("Webhook refused"); waited++) await pause(100)
    } finally {
      await stop(server)
      await receiver.close()
    }
    const output = server.output()
    expect(output).toContain("Webhook refused")
    expect(output).toContain("Sent HTTP response")
    for (const secret of secrets) expect(output, secret).not.toContain(secret)
  })

  it("after kill -9 in the middle of a batch, the restarted server finishes it at once and sends exactly one webhook", { timeout: 180_000 }, async () => {
    const dataDir = Path.join(scratch, "killed")
    const receiver = await startWebhookReceiver()
    const links = linksOf("killed", 120, 100)
    let server = await serve({ DATA_DIR: dataDir })
    try {
      const id = await postBatch(server, { uris: links.uris, webhook_uri: receiver.url })
      await untilRequested(links, 30)
      server.child.kill("SIGKILL")
      await server.exited
      const doneAtKill = links.requested()

      server = await serve({ DATA_DIR: dataDir })
      const restartedAt = Date.now()
      const batch = await waitForCompletion(server, id, 60_000)
      // the dead copy's claims were handed back at start, not after they ran out (30 s)
      expect(Date.now() - restartedAt).toBeLessThan(20_000)
      expect(batch.totals).toMatchObject({ links: 120, ok: 120, pending: 0 })
      expect(doneAtKill).toBeLessThan(120)
      // only checks in flight at the kill may have been asked twice
      expect(links.mostRequests()).toBeLessThanOrEqual(2)
      await expectOneWebhook(receiver)
    } finally {
      await stop(server)
      await receiver.close()
    }
  })

  it("on SIGTERM in the middle of a batch it exits 0 having recorded or handed back every check; after a restart no link is asked twice", { timeout: 180_000 }, async () => {
    const dataDir = Path.join(scratch, "stopped")
    const receiver = await startWebhookReceiver()
    const links = linksOf("stopped", 80, 150)
    let server = await serve({ DATA_DIR: dataDir })
    try {
      const id = await postBatch(server, { uris: links.uris, webhook_uri: receiver.url })
      await untilRequested(links, 20)
      expect(await stop(server)).toBe(0)

      server = await serve({ DATA_DIR: dataDir })
      const batch = await waitForCompletion(server, id, 60_000)
      expect(batch.totals).toMatchObject({ links: 80, ok: 80, pending: 0 })
      expect(links.mostRequests()).toBe(1)
      await expectOneWebhook(receiver)
    } finally {
      await stop(server)
      await receiver.close()
    }
  })

  it("answers hostile input with 4xx envelopes, never a 500, changes nothing, and stays up", { timeout: 120_000 }, async () => {
    const server = await serve({ DATA_DIR: Path.join(scratch, "hostile") })
    try {
      const json = (body: string) => ({ method: "POST", headers: { "content-type": "application/json" }, body })
      const hostile: ReadonlyArray<readonly [string, RequestInit | undefined]> = [
        ["/check?uri=%00", undefined],
        ["/check?uri=%20%20", undefined],
        ["/check?checked_within=-1&uri=x", undefined],
        ["/check?synchronous=maybe&uri=x", undefined],
        ["/batch", json("{\"uris\": [\"\\u0000\"]}")],
        ["/batch", json("{\"uris\": [\"\\ud800\"]}")],
        ["/batch", json("{\"uris\": \"https://example.org/\"}")],
        ["/batch", json("{\"uris\": [1, 2]}")],
        ["/batch", json("{\"uris\": [\"https://example.org/\"], \"webhook_uri\": \"javascript:alert(1)\"}")],
        ["/batch", json("{\"uris\": [\"https://example.org/\"], \"priority\": {\"__proto__\": {}}}")],
        ["/batch", json(`{"uris": ${"[".repeat(5000)}${"]".repeat(5000)}}`)],
        ["/batch", json("{\"uris\": [")],
        ["/batch", json("null")],
        ["/batch", { method: "POST", headers: { "content-type": "text/plain" }, body: "uris=x" }],
        ["/batch", json(JSON.stringify({ uris: Array.from({ length: 5001 }, (_, n) => `https://example.org/${n}`) }))],
        ["/batch/abc", undefined],
        ["/batch/99999999999999999999", undefined],
        ["/batch", { method: "DELETE" }]
      ]
      for (const [path, init] of hostile) {
        const response = await linkcheckFetch(`${server.url}${path}`, init)
        const body = await response.text()
        expect({ path, status: response.status >= 400 && response.status < 500 }).toEqual({ path, status: true })
        expect((JSON.parse(body) as { error?: unknown }).error).toEqual(expect.any(String))
      }
      const ready = await fetch(`${server.url}/healthcheck/ready`)
      expect(ready.status).toBe(200)
      expect(((await ready.json()) as { services: { linkcheck: { pending_checks: number } } }).services.linkcheck.pending_checks)
        .toBe(0)
      expect(server.output()).not.toContain("\"logLevel\":\"ERROR\"")
    } finally {
      await stop(server)
    }
  })
})

describe.skipIf(process.env.TEST_DATABASE_URL === undefined)("link checking on PostgreSQL, as operators meet it", () => {
  let database: { url: string; drop: () => Promise<unknown> }
  beforeAll(async () => {
    database = await createTestDatabase(process.env.TEST_DATABASE_URL!, "system", Effect.void)
  })
  afterAll(() => database?.drop())

  it("with two copies, kill -9 of one in the middle of a batch: the other finishes it within seconds, one webhook", { timeout: 180_000 }, async () => {
    const receiver = await startWebhookReceiver()
    const links = linksOf("two-copies", 160, 100)
    const env = { DATABASE_URL: database.url, DATA_DIR: Path.join(scratch, "two-copies") }
    const [first, second] = await Promise.all([serve(env), serve(env)])
    try {
      const id = await postBatch(first!, { uris: links.uris, webhook_uri: receiver.url })
      await untilRequested(links, 40)
      second!.child.kill("SIGKILL")
      const killedAt = Date.now()
      const batch = await waitForCompletion(first!, id, 90_000)
      expect(batch.totals).toMatchObject({ links: 160, ok: 160, pending: 0 })
      // the survivor's next heartbeat hands the dead copy's checks back (every 10 s), not their claims' end
      expect(Date.now() - killedAt).toBeLessThan(25_000)
      expect(links.mostRequests()).toBeLessThanOrEqual(2)
      await expectOneWebhook(receiver)
    } finally {
      await stop(first!)
      await stop(second!)
      await receiver.close()
    }
  })

  it("through a 5 s database outage in the middle of a batch: 503 meanwhile, then it finishes with no link asked twice and one webhook", { timeout: 180_000 }, async () => {
    const target = new URL(database.url)
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) })
    const throughProxy = new URL(database.url)
    throughProxy.host = `127.0.0.1:${proxy.port}`
    const receiver = await startWebhookReceiver()
    const links = linksOf("outage", 100, 100)
    const server = await serve({ DATABASE_URL: throughProxy.toString(), DATA_DIR: Path.join(scratch, "outage") })
    try {
      const id = await postBatch(server, { uris: links.uris, webhook_uri: receiver.url })
      await untilRequested(links, 20)
      await proxy.cut()
      await pause(1000)
      const duringOutage = await linkcheckFetch(`${server.url}/batch/${id}`)
      expect(duringOutage.status).toBe(503)
      expect(duringOutage.headers.get("retry-after")).toBe("5")
      expect((await fetch(`${server.url}/healthcheck/ready`)).status).toBe(503)
      await pause(4000)
      await proxy.restore()
      const restoredAt = Date.now()
      const batch = await waitForCompletion(server, id, 60_000)
      expect(batch.totals).toMatchObject({ links: 100, ok: 100, pending: 0 })
      expect(Date.now() - restoredAt).toBeLessThan(30_000)
      expect(links.mostRequests()).toBe(1)
      await expectOneWebhook(receiver)
    } finally {
      await stop(server)
      await receiver.close()
      await proxy.close()
    }
  })
})
