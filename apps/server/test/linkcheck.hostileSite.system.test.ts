import * as Path from "node:path"
import { describe, expect, it } from "vitest"
import { linkcheckFetch } from "./linkcheckCaller"
import { linkcheckSystemSetup } from "./linkcheckSystem"
import { startCli, stop, waitUntilReady } from "./serverProcess"

/**
 * A real server process against a hostile site: pages that drip their bodies for ever, more of them than the site's
 * limit, on two ports of one site. A person's check of a normal page of that site still gets its answer within the
 * check deadline, and the batch that holds the dripping pages completes.
 */

const CHECK_TIMEOUT_SECONDS = 8
const PER_SITE = 4

const setup = linkcheckSystemSetup("civicstack-hostile-site-")

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface LinkState {
  readonly uri: string
  readonly status: string
  readonly problem_summary: string | null
}

interface BatchState {
  readonly status: string
  readonly links: ReadonlyArray<LinkState>
  readonly totals: { readonly links: number; readonly pending: number }
}

describe("link checking against a hostile site, in a real server process", () => {
  it("dripping pages over the site's limit do not delay a check of a normal page past the deadline, and their batch completes", { timeout: 120_000 }, async () => {
    const server = await startCli(["serve"], {
      CIVICSTACK_BOOTSTRAP: setup.caller.file,
      DATA_DIR: Path.join(setup.scratch, "data"),
      LINKCHECK_ALLOW_PRIVATE_ADDRESSES: "true",
      LINKCHECK_PER_HOST_CONCURRENCY: String(PER_SITE),
      LINKCHECK_CHECK_TIMEOUT_SECONDS: String(CHECK_TIMEOUT_SECONDS)
    })
    try {
      await waitUntilReady(server, 60_000)
      // the HTML pages come first, so they take every slot of the site and keep them until their deadline
      const htmlDrips = Array.from({ length: 5 }, (_, n) => `${n % 2 === 0 ? setup.fleet.http : setup.fleet.https}/drip?every=200&hostile=${n}`)
      const textDrips = Array.from({ length: 5 }, (_, n) => `${n % 2 === 0 ? setup.fleet.https : setup.fleet.http}/drip?every=200&type=text&hostile=${n}`)
      const normalPages = [`${setup.fleet.http}/ok?hostile-batch=1`, `${setup.fleet.http}/ok?hostile-batch=2`]
      const uris = [...htmlDrips, ...textDrips, ...normalPages]
      const site = setup.fleet.watchRequests((host) => host.startsWith("127.0.0.1:"))

      const batchStartedAt = Date.now()
      const created = await linkcheckFetch(`${server.url}/batch`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ uris })
      })
      expect(created.status).toBe(202)
      const { id } = (await created.json()) as { id: number }
      for (let waited = 0; site.inProgress() < PER_SITE; waited += 20) {
        if (waited > 30_000) throw new Error(`the dripping pages were not requested:\n${server.output().slice(-4000)}`)
        await pause(20)
      }
      await pause(2_000)
      expect(site.inProgress()).toBe(PER_SITE)

      const checkStartedAt = Date.now()
      const checked = await linkcheckFetch(`${server.url}/check?${new URLSearchParams({ uri: `${setup.fleet.http}/ok?hostile-request`, synchronous: "true" })}`)
      const checkMillis = Date.now() - checkStartedAt
      expect(checked.status).toBe(200)
      const link = (await checked.json()) as LinkState
      expect(link.status).toBe("ok")
      expect(checkMillis).toBeLessThan(CHECK_TIMEOUT_SECONDS * 1000)

      let batch: BatchState | undefined
      for (;;) {
        batch = (await (await linkcheckFetch(`${server.url}/batch/${id}`)).json()) as BatchState
        if (batch.status === "completed" || Date.now() - batchStartedAt > 90_000) break
        await pause(250)
      }
      const batchMillis = Date.now() - batchStartedAt
      expect(batch.status).toBe("completed")
      expect(batch.totals).toMatchObject({ links: uris.length, pending: 0 })
      const statusOf = (uri: string) => batch!.links.find((each) => each.uri === uri)
      for (const uri of htmlDrips) expect(statusOf(uri)).toMatchObject({ status: "broken", problem_summary: "Website unavailable" })
      for (const uri of [...textDrips, ...normalPages]) expect(statusOf(uri)?.status).not.toBe("broken")
      console.info(`hostile site: the check in a request took ${checkMillis} ms, the batch ${batchMillis} ms`)
    } finally {
      await stop(server)
    }
  })
})
