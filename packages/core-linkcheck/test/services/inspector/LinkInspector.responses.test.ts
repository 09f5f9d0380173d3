import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { startFixtureFleet } from "../../fixtures/fleet"
import type { FixtureFleet } from "../../fixtures/fleet"
import { checkLink, expectEndUserSentences, expectOk, expectSingleProblem } from "./support"

let fleet: FixtureFleet
beforeAll(async () => {
  fleet = await startFixtureFleet()
})
afterAll(() => fleet.close())

describe("LinkInspector: responses", () => {
  it.live("a 200 page is ok, requested once with GET, the configured User-Agent and Accept", () =>
    Effect.gen(function*() {
      const outcome = yield* checkLink(fleet, `${fleet.http}/ok?headers`, { config: { userAgent: "TestBrowser/1.0 checker" } })
      expectOk(outcome)
      expect(fleet.requests("/ok?headers")).toMatchObject([
        { method: "GET", headers: { "user-agent": "TestBrowser/1.0 checker", accept: "text/html,*/*" } }
      ])
    }))

  it.live("the default User-Agent names the service", () =>
    Effect.gen(function*() {
      expectOk(yield* checkLink(fleet, `${fleet.http}/ok?default-agent`))
      expect(fleet.requests("/ok?default-agent")[0]?.headers["user-agent"]).toMatch(/^Mozilla\/5\.0 .*civicstack-linkcheck/)
    }))

  const statusCases = [
    { path: "/status/404", status: "broken", summary: "Page not found", severity: "error" },
    { path: "/status/410", status: "broken", summary: "Page not found", severity: "error" },
    { path: "/status/401", status: "broken", summary: "Page requires login", severity: "error" },
    { path: "/status/403", status: "broken", summary: "Page requires login", severity: "error" },
    { path: "/status/403?cf-mitigated=challenge", status: "caution", summary: "Page blocks robots", severity: "warning" },
    { path: "/status/401?cf-mitigated=challenge", status: "caution", summary: "Page blocks robots", severity: "warning" },
    { path: "/status/418", status: "broken", summary: "Page unavailable", severity: "error" },
    { path: "/status/500", status: "broken", summary: "Page unavailable", severity: "error" },
    { path: "/status/502", status: "broken", summary: "Page unavailable", severity: "error" },
    { path: "/status/204", status: "caution", summary: "Page unavailable", severity: "warning" },
    { path: "/status/299", status: "caution", summary: "Page unavailable", severity: "warning" },
    { path: "/status/302", status: "caution", summary: "Page unavailable", severity: "warning" },
    { path: "/flaky/429/foreground?failures=always&retry-after=1", status: "caution", summary: "Rate limited", severity: "warning" },
    { path: "/flaky/503/foreground?failures=always", status: "broken", summary: "Page unavailable", severity: "error" }
  ] as const

  for (const { path, severity, status, summary } of statusCases) {
    it.live(`${path} is ${status}: ${summary}`, () =>
      Effect.gen(function*() {
        const outcome = yield* checkLink(fleet, `${fleet.http}${path}`)
        expectSingleProblem(outcome, { status, summary, severity })
        expect(fleet.requestCount(path)).toBe(1)
      }))
  }

  it.live("404 and 410 give different messages under the same summary", () =>
    Effect.gen(function*() {
      const notFound = yield* checkLink(fleet, `${fleet.http}/status/404`)
      const gone = yield* checkLink(fleet, `${fleet.http}/status/410`)
      expect(notFound.errors[0]).not.toBe(gone.errors[0])
    }))

  it.live("a page that is not HTML is ok", () =>
    Effect.gen(function*() {
      expectOk(yield* checkLink(fleet, `${fleet.http}/text`))
    }))

  it.live("a slow page is a warning when nothing else is wrong", () =>
    Effect.gen(function*() {
      const outcome = yield* checkLink(fleet, `${fleet.http}/slow?ms=500`)
      expectSingleProblem(outcome, { status: "caution", summary: "Slow page", severity: "warning" })
    }))

  it.live("a page under the slow threshold is ok", () =>
    Effect.gen(function*() {
      expectOk(yield* checkLink(fleet, `${fleet.http}/slow?ms=20`))
    }))

  it.live("a slow page with an error is reported for the error only", () =>
    Effect.gen(function*() {
      const outcome = yield* checkLink(fleet, `${fleet.http}/slow?ms=500&status=404`)
      expectSingleProblem(outcome, { status: "broken", summary: "Page not found", severity: "error" })
    }))

  describe("rating meta tag", () => {
    const flagged = ["adult", "mature", "restricted", "RTA-5042-1996-1400-1577-RTA", "ADULT"]
    for (const content of flagged) {
      it.live(`content="${content}" is suspicious content`, () =>
        Effect.gen(function*() {
          const outcome = yield* checkLink(fleet, `${fleet.http}/rating?content=${encodeURIComponent(content)}`)
          expectSingleProblem(outcome, { status: "caution", summary: "Suspicious content", severity: "warning" })
        }))
    }

    it.live("is found whatever the order of its attributes", () =>
      Effect.gen(function*() {
        const outcome = yield* checkLink(fleet, `${fleet.http}/rating?content=mature&order=content-first`)
        expect(outcome.problemSummary).toBe("Suspicious content")
      }))

    it.live("is found after 40 KB of head, in a page that arrives in pieces split inside its </head>", () =>
      Effect.gen(function*() {
        const outcome = yield* checkLink(fleet, `${fleet.http}/rating?content=mature&padding=40000`)
        expect(outcome.problemSummary).toBe("Suspicious content")
      }))

    it.live("is not looked for past the first 64 KiB of the page", () =>
      Effect.gen(function*() {
        expectOk(yield* checkLink(fleet, `${fleet.http}/rating?content=mature&padding=70000`))
      }))

    it.live("a general rating is ok", () =>
      Effect.gen(function*() {
        expectOk(yield* checkLink(fleet, `${fleet.http}/rating?content=general`))
      }))
  })

  it.live("a 50 MB page is not downloaded: the check stops after the head of the page", () =>
    Effect.gen(function*() {
      expectOk(yield* checkLink(fleet, `${fleet.http}/huge`))
      yield* Effect.sleep("200 millis")
      expect(fleet.bytesSent("/huge")).toBeGreaterThan(0)
      expect(fleet.bytesSent("/huge")).toBeLessThan(10 * 1024 * 1024)
    }))

  it.live("login details in the URL are a warning, and are not sent", () =>
    Effect.gen(function*() {
      const uri = fleet.http.replace("http://", "http://someone:hunter2@") + "/ok?credentials"
      const outcome = yield* checkLink(fleet, uri)
      const message = expectSingleProblem(outcome, { status: "caution", summary: "Login details in URL", severity: "warning" })
      expect(message).not.toContain("hunter2")
      const [received] = fleet.requests("/ok?credentials")
      expect(received?.headers.authorization).toBeUndefined()
      expect(received?.headers.host).toBe(new URL(fleet.http).host)
    }))

  it.live("messages and the summary follow the most important problem when there are several", () =>
    Effect.gen(function*() {
      const uri = fleet.https.replace("https://", "https://someone:secret@") + "/status/404"
      const outcome = yield* checkLink(fleet, uri)
      expect(outcome.status).toBe("broken")
      expect(outcome.problemSummary).toBe("Page not found")
      expect(outcome.errors).toHaveLength(1)
      expect(outcome.warnings).toHaveLength(2)
      expect(outcome.suggestedFix).toBeNull()
      expectEndUserSentences(outcome)
    }))
})
