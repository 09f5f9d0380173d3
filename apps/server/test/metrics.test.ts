/**
 * `GET /metrics` after known traffic: each answer counted by method, route template and status, with its latency;
 * each service's backlog, the job queues and the process; nothing when `METRICS=false`.
 */
import { createTestDatabase, startTcpProxy } from "@civicstack/kit/testing"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type InProcessServer, startInProcessServer } from "./inProcessServer"
import { linkcheckCallerBootstrap, linkcheckFetch } from "./linkcheckCaller"

let caller: Awaited<ReturnType<typeof linkcheckCallerBootstrap>>
let server: InProcessServer
beforeAll(async () => {
  caller = await linkcheckCallerBootstrap()
  server = await startInProcessServer({ CIVICSTACK_BOOTSTRAP: caller.file })
})
afterAll(async () => {
  await server?.close()
  await caller?.remove()
})

/** The value of each sample of the Prometheus text, by its name and labels as written (`otel_scope_name` left out). */
const samples = async (url: string) => {
  const response = await fetch(`${url}/metrics`)
  expect(response.status).toBe(200)
  expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/)
  const found = new Map<string, number>()
  for (const line of (await response.text()).split("\n")) {
    const sample = /^([a-z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (sample === null) continue
    const labels = (sample[2] ?? "").split(/,(?=[a-z_]+=")/).filter((label) => label !== "" && !label.startsWith("otel_scope_name="))
    found.set(`${sample[1]}{${labels.join(",")}}`, Number(sample[3]))
  }
  return found
}

const increase = (before: Map<string, number>, after: Map<string, number>, key: string) =>
  (after.get(key) ?? 0) - (before.get(key) ?? 0)

describe("GET /metrics", () => {
  it("counts the answers caused, by method, route template and status, with their latency", async () => {
    const before = await samples(server.url)
    for (let n = 0; n < 3; n++) expect((await fetch(`${server.url}/healthcheck/live`)).status).toBe(200)
    for (const id of [1, 2]) expect((await linkcheckFetch(`${server.url}/batch/${1_000_000 + id}`)).status).toBe(404)
    expect((await fetch(`${server.url}/no/such/path`)).status).toBe(404)
    expect((await fetch(`${server.url}/batch`)).status).toBe(405)
    // answered before the HTTP stack, from the sign-on's memory, and counted the same
    expect((await fetch(`${server.url}/user.json`)).status).toBe(401)
    const after = await samples(server.url)

    const requests = (method: string, route: string, status: number) =>
      increase(before, after, `http_server_requests_total{method="${method}",route="${route}",status="${status}"}`)
    expect(requests("GET", "/healthcheck/live", 200)).toBe(3)
    expect(requests("GET", "/batch/:id", 404)).toBe(2)
    expect(requests("GET", "unmatched", 404)).toBe(1)
    expect(requests("GET", "/batch", 405)).toBe(1)
    expect(requests("GET", "/metrics", 200)).toBe(1)
    expect(requests("GET", "/user.json", 401)).toBe(1)
    expect(increase(before, after, `http_server_request_duration_seconds_count{method="GET",route="/batch/:id"}`)).toBe(2)
    expect(after.get(`http_server_request_duration_seconds_bucket{method="GET",route="/batch/:id",le="+Inf"}`))
      .toBe(after.get(`http_server_request_duration_seconds_count{method="GET",route="/batch/:id"}`))
  })

  it("counts what the services did: a link check by its status, a refused token request by its error", async () => {
    const before = await samples(server.url)
    const check = await linkcheckFetch(`${server.url}/check?${new URLSearchParams({ uri: "mailto:someone@example.org", synchronous: "true" })}`)
    expect(check.status).toBe(200)
    const { status } = (await check.json()) as { status: string }
    const token = await fetch(`${server.url}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "authorization_code", code: "x", client_id: "nobody", client_secret: "wrong" })
    })
    expect(token.status).toBe(401)
    const after = await samples(server.url)
    expect(increase(before, after, `linkcheck_checks_completed_total{status="${status}"}`)).toBe(1)
    expect(increase(before, after, `sso_token_grants_total{grant_type="authorization_code",outcome="invalid_client"}`)).toBe(1)
  })

  it("shows each service's backlog, the job queues and the process", async () => {
    const found = await samples(server.url)
    expect(found.get(`civicstack_service_work{service="linkcheck",figure="pending_checks"}`)).toBe(0)
    expect(found.get(`civicstack_service_work{service="alerts",figure="queue_size"}`)).toBe(0)
    expect(found.get(`civicstack_service_work{service="sso",figure="waiting_pushes"}`)).toBe(0)
    expect(found.get("process_resident_memory_bytes{}")).toBeGreaterThan(10_000_000)
    expect(found.get("process_cpu_seconds{}")).toBeGreaterThan(0)
  })
})

describe.skipIf(process.env.TEST_DATABASE_URL === undefined)("on PostgreSQL", () => {
  it("shows the connection pool's use, and still answers while the database is unreachable", async () => {
    const database = await createTestDatabase(process.env.TEST_DATABASE_URL!, "metrics_pool", Effect.void)
    const target = new URL(database.url)
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) })
    const throughProxy = new URL(database.url)
    throughProxy.host = `127.0.0.1:${proxy.port}`
    const onPostgres = await startInProcessServer({
      DATABASE_URL: throughProxy.toString(),
      DATABASE_POOL_SIZE: "7",
      SERVICES: "linkcheck"
    })
    try {
      const found = await samples(onPostgres.url)
      expect(found.get("db_client_connection_max{}")).toBe(7)
      const used = found.get(`db_client_connection_count{state="used"}`)!
      const idle = found.get(`db_client_connection_count{state="idle"}`)!
      expect(used + idle).toBeGreaterThanOrEqual(1)
      expect(used + idle).toBeLessThanOrEqual(7)
      expect(found.get("db_client_connection_pending_requests{}")).toBe(0)

      await proxy.cut()
      const duringOutage = await samples(onPostgres.url)
      expect(duringOutage.get("process_resident_memory_bytes{}")).toBeGreaterThan(10_000_000)
      expect(duringOutage.get("db_client_connection_max{}")).toBe(7)
      await proxy.restore()
    } finally {
      await onPostgres.close()
      await proxy.close()
      await database.drop()
    }
  }, 60_000)
})

describe("METRICS=false", () => {
  it("serves no /metrics", async () => {
    const quiet = await startInProcessServer({ METRICS: "false", SERVICES: "linkcheck" })
    try {
      expect((await fetch(`${quiet.url}/metrics`)).status).toBe(404)
    } finally {
      await quiet.close()
    }
  })
})
