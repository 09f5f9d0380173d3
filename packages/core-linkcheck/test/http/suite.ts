import { createHmac, randomBytes } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ManagedRuntime } from "effect"
import { startFixtureFleet } from "../fixtures/fleet"
import type { FixtureFleet } from "../fixtures/fleet"
import { startWebhookReceiver } from "../fixtures/webhookReceiver"
import type { ServiceUnderTest } from "./backends"
import { baseUrl, servedOver } from "./server"

/**
 * The service's own endpoints over HTTP, one server for the whole suite. What the reference server adds in front
 * (the single sign-on's token check, its error envelope for bad input) is tested in apps/server/test.
 */
export const linkcheckHttpSuite = (name: string, backend: () => ServiceUnderTest) =>
  describe(`the link checking endpoints on ${name}`, () => {
    let server: { readonly dispose: () => Promise<void> } | undefined
    let url = ""
    let fleet: FixtureFleet

    beforeAll(async () => {
      fleet = await startFixtureFleet()
      const runtime = ManagedRuntime.make(servedOver(backend()))
      server = runtime
      url = await runtime.runPromise(baseUrl)
    })
    afterAll(async () => {
      await server?.dispose()
      await fleet?.close()
    })

    const get = (path: string) => fetch(`${url}${path}`)
    const postBatch = (body: string, contentType = "application/json") =>
      fetch(`${url}/batch`, { method: "POST", headers: { "content-type": contentType }, body })
    // Reports are checked field by field below; `any` keeps those assertions readable.
    const json = (response: Response): Promise<any> => response.json()
    const checkQuery = (params: Record<string, string>) => `/check?${new URLSearchParams(params)}`

    /** A uri of exactly `length` characters to a fixture page, random after the path so that it does not compress. */
    const longUri = (length: number) => {
      const prefix = `${fleet.http}/ok?`
      return prefix + randomBytes(length).toString("base64url").slice(0, length - prefix.length)
    }

    const pollBatch = async (id: number, timeoutMs = 20_000) => {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const report = await (await get(`/batch/${id}`)).json() as { status: string }
        if (report.status === "completed" || Date.now() > deadline) return report as Record<string, any>
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }

    describe("GET /check", () => {
      it("checks synchronously, answering the report with its keys in order as application/json; charset=utf-8", async () => {
        const response = await get(checkQuery({ uri: `${fleet.http}/ok`, synchronous: "true" }))
        expect(response.status).toBe(200)
        expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8")
        const report = await response.json() as Record<string, unknown>
        expect(Object.keys(report)).toEqual([
          "uri", "status", "checked", "problem_summary", "errors", "warnings", "danger", "suggested_fix"
        ])
        expect(report).toMatchObject({ uri: `${fleet.http}/ok`, status: "ok", problem_summary: null, errors: [], danger: [] })
        expect(report.checked).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
      })

      it("reports a page that is not found as broken with its summary and fix", async () => {
        const report = await json(await get(checkQuery({ uri: `${fleet.http}/status/404`, synchronous: "true" })))
        expect(report).toMatchObject({ status: "broken", problem_summary: "Page not found" })
        expect(report.errors).toHaveLength(1)
        expect(typeof report.suggested_fix).toBe("string")
      })

      it("reports a string that is not a URL as broken, not as a bad request", async () => {
        const report = await json(await get(checkQuery({ uri: "not a url", synchronous: "true" })))
        expect(report).toMatchObject({ uri: "not a url", status: "broken", problem_summary: "Invalid URL" })
      })

      it("reuses a check within checked_within and makes a new one with 0", async () => {
        const uri = `${fleet.http}/ok?reuse`
        const first = await json(await get(checkQuery({ uri, synchronous: "true" })))
        const again = await json(await get(checkQuery({ uri, synchronous: "true", checked_within: "600" })))
        expect(again).toEqual(first)
        expect(fleet.requestCount("/ok?reuse")).toBe(1)
        await get(checkQuery({ uri, synchronous: "true", checked_within: "0" }))
        expect(fleet.requestCount("/ok?reuse")).toBe(2)
      })

      it("queues a check when not synchronous: pending first, then the result", async () => {
        const uri = `${fleet.http}/status/410?queued`
        const pending = await json(await get(checkQuery({ uri })))
        expect(pending).toMatchObject({ status: "pending", checked: null, errors: [], warnings: [], danger: [] })
        const deadline = Date.now() + 10_000
        let report = pending
        while (report.status === "pending" && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 50))
          report = await json(await get(checkQuery({ uri })))
        }
        expect(report).toMatchObject({ status: "broken", problem_summary: "Page not found" })
      })
    })

    describe("long uris", () => {
      it("GET /check checks a random uri of 2,800 characters and reuses its check", async () => {
        const uri = longUri(2_800)
        expect(uri).toHaveLength(2_800)
        const response = await get(checkQuery({ uri, synchronous: "true" }))
        expect(response.status).toBe(200)
        const report = await json(response)
        expect(report).toMatchObject({ uri, status: "ok", errors: [] })
        expect(await json(await get(checkQuery({ uri, synchronous: "true" })))).toEqual(report)
        expect(fleet.requestCount(uri.slice(fleet.http.length))).toBe(1)
      })

      it("POST /batch accepts random uris of 2,800 characters among others and checks them", async () => {
        const uris = [`${fleet.http}/ok?beside-long`, longUri(2_800), longUri(2_800)]
        const response = await postBatch(JSON.stringify({ uris }))
        expect(response.status).toBe(202)
        const created = await json(response)
        expect(created.links.map((link: { uri: string }) => link.uri)).toEqual(uris)
        const completed = await pollBatch(created.id)
        expect(completed).toMatchObject({ status: "completed", totals: { links: 3, ok: 3 } })
      })

      it("accepts characters outside the BMP (surrogate pairs), raw or escaped", async () => {
        const uri = `${fleet.http}/ok?emoji=\u{1F600}`
        expect(await json(await get(checkQuery({ uri, synchronous: "true" })))).toMatchObject({ uri, status: "ok" })

        const receiver = await startWebhookReceiver()
        try {
          const escaped = String.raw`{"uris": ["${fleet.http}/ok?escaped=\ud83d\ude00", "mailto:\ud83d\ude00@example.org"],
            "webhook_uri": "${receiver.url}", "webhook_secret_token": "\ud83d\ude00"}`
          const response = await postBatch(escaped)
          expect(response.status).toBe(202)
          const created = await json(response)
          expect(created.links.map((link: { uri: string }) => link.uri)).toEqual([
            `${fleet.http}/ok?escaped=\u{1F600}`,
            "mailto:\u{1F600}@example.org"
          ])
          await receiver.waitFor(1)
          const [webhook] = receiver.received
          const signature = createHmac("sha1", "\u{1F600}").update(webhook!.body).digest("hex")
          expect(webhook!.headers["x-linkcheckerapi-signature"]).toBe(signature)

          const raw = await postBatch(JSON.stringify({ uris: [`${fleet.http}/ok?raw=\u{1F600}`] }))
          expect(raw.status).toBe(202)
          expect((await json(raw)).links[0].uri).toBe(`${fleet.http}/ok?raw=\u{1F600}`)
        } finally {
          await receiver.close()
        }
      })
    })

    describe("POST /batch and GET /batch/{id}", () => {
      it("answers 202 in order, completes, and sends exactly one signed webhook; the same links again answer 201", async () => {
        const receiver = await startWebhookReceiver()
        try {
          const uris = [`${fleet.http}/ok?b1`, `${fleet.http}/status/404?b1`, "", `${fleet.http}/ok?b1`, "mailto:a@example.org"]
          const response = await postBatch(JSON.stringify({
            uris,
            webhook_uri: receiver.url,
            webhook_secret_token: "this is a secret key"
          }))
          expect(response.status).toBe(202)
          const created = await json(response)
          expect(created.status).toBe("in_progress")
          expect(created.links.map((link: { uri: string }) => link.uri)).toEqual(uris.filter((uri) => uri !== ""))
          expect(Object.keys(created)).toEqual(["id", "status", "links", "totals", "completed_at"])

          const completed = await pollBatch(created.id)
          expect(completed).toMatchObject({
            id: created.id,
            status: "completed",
            totals: { links: 4, ok: 2, caution: 1, broken: 1, pending: 0, danger: 0 }
          })
          expect(completed.completed_at).toMatch(/Z$/)
          expect(fleet.requestCount("/ok?b1")).toBe(1)

          await receiver.waitFor(1)
          await new Promise((resolve) => setTimeout(resolve, 300))
          expect(receiver.received).toHaveLength(1)
          const [webhook] = receiver.received
          const signature = createHmac("sha1", "this is a secret key").update(webhook!.body).digest("hex")
          expect(webhook!.headers["x-linkcheckerapi-signature"]).toBe(signature)
          expect(webhook!.headers["content-type"]).toBe("application/json")
          expect(JSON.parse(webhook!.body.toString())).toEqual(completed)

          const again = await postBatch(JSON.stringify({ uris: uris.slice(0, 2) }))
          expect(again.status).toBe(201)
          expect(await again.json()).toMatchObject({ status: "completed", totals: { links: 2, pending: 0 } })
        } finally {
          await receiver.close()
        }
      })

      it("answers 404 with the JSON error for an unknown batch", async () => {
        for (const id of ["999999", "abc", "0", "-1"]) {
          const response = await get(`/batch/${id}`)
          expect(response.status).toBe(404)
          expect(await response.json()).toEqual({ error: "Not Found" })
        }
      })
    })
  })
