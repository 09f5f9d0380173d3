import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase } from "@civicstack/kit/testing"
import { startFixtureFleet } from "../../../packages/core-linkcheck/test/fixtures/fleet"
import type { FixtureFleet } from "../../../packages/core-linkcheck/test/fixtures/fleet"
import { startInProcessServer } from "./inProcessServer"
import type { InProcessServer } from "./inProcessServer"
import { linkcheckCallerBootstrap, linkcheckFetch } from "./linkcheckCaller"

/** The link checking API's caller, ensured by each server these tests start. */
let caller: Awaited<ReturnType<typeof linkcheckCallerBootstrap>>
beforeAll(async () => {
  caller = await linkcheckCallerBootstrap()
})
afterAll(() => caller?.remove())

let fleet: FixtureFleet
beforeAll(async () => {
  fleet = await startFixtureFleet()
})
afterAll(() => fleet?.close())

const batchStatus = async (server: InProcessServer, id: number) =>
  ((await (await linkcheckFetch(`${server.url}/batch/${id}`)).json()) as { status: string }).status

const postBatch = async (server: InProcessServer, uris: ReadonlyArray<string>) => {
  const response = await linkcheckFetch(`${server.url}/batch`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ uris })
  })
  expect(response.status).toBe(202)
  return ((await response.json()) as { id: number }).id
}

describe("RUN picks what a copy does", () => {
  it("a workers-only copy answers its health checks but serves no service routes", async () => {
    const server = await startInProcessServer({ CIVICSTACK_BOOTSTRAP: caller.file, RUN: "workers" })
    try {
      expect((await fetch(`${server.url}/healthcheck/ready`)).status).toBe(200)
      const check = await linkcheckFetch(`${server.url}/check?uri=mailto:a@example.org`)
      expect(check.status).toBe(404)
      expect(await check.json()).toEqual({ error: "Not Found" })
    } finally {
      await server.close()
    }
  })

  it("readiness shows the link checking backlog: pending checks, those being checked and the oldest one's age", async () => {
    const server = await startInProcessServer({ CIVICSTACK_BOOTSTRAP: caller.file, RUN: "web", LINKCHECK_ALLOW_PRIVATE_ADDRESSES: "true" })
    const readiness = async () =>
      ((await (await fetch(`${server.url}/healthcheck/ready`)).json()) as { services: Record<string, unknown> }).services
    try {
      expect(await readiness()).toEqual({
        sso: { waiting_pushes: 0, sending_pushes: 0, failed_pushes: 0, oldest_due_push_age_seconds: null },
        alerts: { queue_size: 0, oldest_pending_email_age_seconds: null, delivery_paused_seconds: 0 },
        linkcheck: { pending_checks: 0, claimed_checks: 0, oldest_claim_age_seconds: null }
      })
      await postBatch(server, [`${fleet.http}/ok?backlog=1`, `${fleet.http}/ok?backlog=2`])
      const slow = linkcheckFetch(`${server.url}/check?${new URLSearchParams({ uri: `${fleet.http}/slow?ms=1500&backlog`, synchronous: "true" })}`)
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(await readiness()).toMatchObject({
        linkcheck: { pending_checks: 3, claimed_checks: 1, oldest_claim_age_seconds: expect.any(Number) }
      })
      expect((await slow).status).toBe(200)
    } finally {
      await server.close()
    }
  })

  it("a copy without a service in SERVICES does not serve its routes", async () => {
    const server = await startInProcessServer({ CIVICSTACK_BOOTSTRAP: caller.file, SERVICES: "sso" })
    try {
      expect((await linkcheckFetch(`${server.url}/batch/1`)).status).toBe(404)
    } finally {
      await server.close()
    }
  })

  it("a copy serving only link checking applies the bootstrap file, so the callers it lists are let in", async () => {
    const server = await startInProcessServer({ CIVICSTACK_BOOTSTRAP: caller.file, SERVICES: "linkcheck" })
    try {
      const missing = await linkcheckFetch(`${server.url}/batch/999`)
      expect(missing.status).toBe(404)
      expect(await missing.json()).toEqual({ error: "Not Found" })
      expect((await fetch(`${server.url}/batch/999`)).status).toBe(401)
    } finally {
      await server.close()
    }
  })
})

describe.skipIf(process.env.TEST_DATABASE_URL === undefined)("web and worker copies on one PostgreSQL", () => {
  let database: { url: string; drop: () => Promise<unknown> }
  beforeAll(async () => {
    database = await createTestDatabase(process.env.TEST_DATABASE_URL!, "roles", Effect.void)
  })
  afterAll(() => database?.drop())

  it("a web-only copy stores batches and a workers-only copy checks them", { timeout: 60_000 }, async () => {
    const env = { DATABASE_URL: database.url, LINKCHECK_ALLOW_PRIVATE_ADDRESSES: "true" }
    const web = await startInProcessServer({ CIVICSTACK_BOOTSTRAP: caller.file, ...env, RUN: "web" })
    let workers: InProcessServer | undefined
    try {
      const id = await postBatch(web, [`${fleet.http}/ok?roles=1`, `${fleet.http}/status/404?roles=1`])
      await new Promise((resolve) => setTimeout(resolve, 1500))
      expect(await batchStatus(web, id)).toBe("in_progress")
      expect(fleet.requestCount("/ok?roles=1")).toBe(0)

      workers = await startInProcessServer({ CIVICSTACK_BOOTSTRAP: caller.file, ...env, RUN: "workers" })
      const deadline = Date.now() + 30_000
      while ((await batchStatus(web, id)) !== "completed" && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      const report = (await (await linkcheckFetch(`${web.url}/batch/${id}`)).json()) as { totals: unknown }
      expect(report.totals).toMatchObject({ links: 2, ok: 1, broken: 1, pending: 0 })
      expect(fleet.requestCount("/ok?roles=1")).toBe(1)
    } finally {
      await workers?.close()
      await web.close()
    }
  })
})
