import * as Path from "node:path"
import { describe, expect, it } from "vitest"
import { startWebhookReceiver } from "../../../packages/core-linkcheck/test/fixtures/webhookReceiver"
import { linkcheckFetch } from "./linkcheckCaller"
import { linkcheckSystemSetup } from "./linkcheckSystem"
import { startCli, stop, waitUntilReady } from "./serverProcess"

const setup = linkcheckSystemSetup("civicstack-fragments-")

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface LinkReport {
  readonly uri: string
  readonly status: string
  readonly warnings: ReadonlyArray<string>
  readonly problem_summary: string | null
}
interface BatchReport {
  readonly status: string
  readonly links: ReadonlyArray<LinkReport>
  readonly totals: Record<string, number>
}

/** Of the sections page's: found raw or decoded, the top of the page, and three it does not have. */
const FRAGMENTS = ["intro", "caf%C3%A9", "café", "%7E", "legacy", "top", "", "missing-one", "missing-two", "paragraph"]
const MISSING = new Set(["missing-one", "missing-two", "paragraph"])

describe("links into sections on a real server process", () => {
  it("a 5000-link batch with 500 links into 50 pages fetches each page once and reports the missing sections", { timeout: 120_000 }, async () => {
    const receiver = await startWebhookReceiver()
    const server = await startCli(["serve"], {
      CIVICSTACK_BOOTSTRAP: setup.caller.file,
      DATA_DIR: Path.join(setup.scratch, "data"),
      LINKCHECK_ALLOW_PRIVATE_ADDRESSES: "true",
      LINKCHECK_CONCURRENCY: "64",
      LINKCHECK_PER_HOST_CONCURRENCY: "64",
      LINKCHECK_PER_HOST_INTERVAL_MS: "0"
    })
    try {
      await waitUntilReady(server, 60_000)
      const sectionLinks = Array.from({ length: 500 }, (_, n) => `${setup.fleet.http}/sections?system-page=${n % 50}#${FRAGMENTS[Math.floor(n / 50)]}`)
      // the section links spread through the batch, between plain links
      const uris = Array.from({ length: 5000 }, (_, n) => n % 10 === 3 ? sectionLinks[(n - 3) / 10]! : `${setup.fleet.http}/ok?system-link=${n}`)
      const startedAt = Date.now()
      const created = await linkcheckFetch(`${server.url}/batch`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ uris, webhook_uri: receiver.url })
      })
      expect(created.status).toBe(202)
      const { id } = (await created.json()) as { id: number }

      let report: BatchReport
      for (;;) {
        report = (await (await linkcheckFetch(`${server.url}/batch/${id}`)).json()) as BatchReport
        if (report.status === "completed" || Date.now() - startedAt > 90_000) break
        await pause(200)
      }
      const tookMs = Date.now() - startedAt
      console.info(`a 5000-link batch with 500 section links completed in ${tookMs} ms`)

      expect(report.status).toBe("completed")
      for (let page = 0; page < 50; page++) expect(setup.fleet.requestCount(`/sections?system-page=${page}`)).toBe(1)
      expect(report.links.map((link) => link.uri)).toEqual(uris)
      expect(report.totals).toMatchObject({ links: 5000, ok: 4850, caution: 150, broken: 0, pending: 0 })
      for (const link of report.links) {
        const fragment = link.uri.includes("#") ? link.uri.slice(link.uri.indexOf("#") + 1) : null
        if (fragment !== null && MISSING.has(fragment)) {
          expect(link).toMatchObject({ status: "caution", problem_summary: "Missing section" })
          expect(link.warnings).toEqual([expect.stringContaining(`#${fragment}`)])
        } else {
          expect(link.status).toBe("ok")
        }
      }

      await receiver.waitFor(1)
      const webhook = JSON.parse(receiver.received[0]!.body.toString("utf8")) as BatchReport
      expect(webhook.links).toEqual(report.links)
      expect(webhook.totals).toEqual(report.totals)
    } finally {
      await stop(server)
      await receiver.close()
    }
  })
})
