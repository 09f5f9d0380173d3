/**
 * Request ids, in a real server process: every answer carries `x-request-id` (the client's when well-formed), and the
 * log lines written while serving a request name it.
 */
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { linkcheckCallerBootstrap, linkcheckFetch } from "./linkcheckCaller"
import { startCli, stop, waitUntilReady } from "./serverProcess"
import type { ServerProcess } from "./serverProcess"

let caller: Awaited<ReturnType<typeof linkcheckCallerBootstrap>>
let dataDir: string
let server: ServerProcess
beforeAll(async () => {
  caller = await linkcheckCallerBootstrap()
  dataDir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "civicstack-request-ids-"))
  server = await startCli(["serve"], {
    CIVICSTACK_BOOTSTRAP: caller.file,
    DATA_DIR: dataDir,
    SERVICES: "sso,linkcheck",
    LOG_LEVEL: "info"
  })
  await waitUntilReady(server, 60_000)
}, 90_000)
afterAll(async () => {
  if (server !== undefined) await stop(server)
  await caller?.remove()
  await Fs.rm(dataDir, { recursive: true, force: true })
})

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

const idOf = async (path: string, given?: string) => {
  const response = await fetch(`${server.url}${path}`, given === undefined ? {} : { headers: { "x-request-id": given } })
  await response.arrayBuffer()
  return response.headers.get("x-request-id")
}

/** The log lines that name `id`, parsed. */
const loggedWith = async (id: string) => {
  await new Promise((resolve) => setTimeout(resolve, 200))
  return server.output().split("\n")
    .filter((line) => line.includes(id))
    .map((line) => JSON.parse(line) as { message: string; annotations: Record<string, unknown> })
}

describe("x-request-id", () => {
  it("is on every answer: a new UUID, or the client's own when well-formed", async () => {
    const fresh = await idOf("/healthcheck/live")
    expect(fresh).toMatch(UUID)
    expect(await idOf("/healthcheck/live")).not.toBe(fresh)
    expect(await idOf("/healthcheck/live", "proxy-7f3a.42:x_y")).toBe("proxy-7f3a.42:x_y")
    for (const malformed of ["two words", "a\"quote", "x".repeat(129), ""]) {
      expect(await idOf("/healthcheck/live", malformed)).toMatch(UUID)
    }
    // answered before the HTTP stack, and refused by the stack
    expect(await idOf("/user.json", "fast-answer-1")).toBe("fast-answer-1")
    expect(await idOf("/no/such/path", "not-found-1")).toBe("not-found-1")
  })

  it("is named by the log lines of the request it was served for", async () => {
    const refused = await linkcheckFetch(`${server.url}/batch`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-request-id": "bad-batch-1" },
      body: JSON.stringify({ uris: [] })
    })
    expect(refused.status).toBe(400)
    expect(refused.headers.get("x-request-id")).toBe("bad-batch-1")
    expect(await loggedWith("bad-batch-1")).toEqual([
      expect.objectContaining({
        message: "Sent HTTP response",
        annotations: expect.objectContaining({ request_id: "bad-batch-1", "http.status": 400 })
      })
    ])

    expect(await idOf("/user.json", "fast-answer-2")).toBe("fast-answer-2")
    expect(await loggedWith("fast-answer-2")).toEqual([
      expect.objectContaining({ message: "Sent HTTP response", annotations: expect.objectContaining({ request_id: "fast-answer-2" }) })
    ])
  })
})
