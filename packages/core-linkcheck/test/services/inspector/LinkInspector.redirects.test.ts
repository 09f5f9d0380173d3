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

const redirectTo = (location: string, status = 302) =>
  `${fleet.http}/redirect/to?location=${encodeURIComponent(location)}&status=${status}`

describe("LinkInspector: redirects", () => {
  it.live("one redirect to a working page is ok", () =>
    Effect.gen(function*() {
      expectOk(yield* checkLink(fleet, `${fleet.http}/redirect/chain/1`))
    }))

  for (const status of [301, 302, 303, 307, 308]) {
    it.live(`a ${status} with a Location is followed`, () =>
      Effect.gen(function*() {
        const before = fleet.requestCount(`/ok?after-${status}`)
        expectOk(yield* checkLink(fleet, redirectTo(`/ok?after-${status}`, status)))
        expect(fleet.requestCount(`/ok?after-${status}`)).toBe(before + 1)
      }))
  }

  it.live("a relative Location is resolved against the current URL", () =>
    Effect.gen(function*() {
      expectOk(yield* checkLink(fleet, redirectTo("../ok?relative")))
      expect(fleet.requestCount("/ok?relative")).toBe(1)
    }))

  it.live("a chain of 2 redirects is a bad redirect whose fix names the final URL", () =>
    Effect.gen(function*() {
      const outcome = yield* checkLink(fleet, `${fleet.http}/redirect/chain/2`)
      expectSingleProblem(outcome, { status: "caution", summary: "Bad redirect", severity: "warning" })
      expect(outcome.suggestedFix).toBe(`Link directly to ${fleet.http}/redirect/chain/0 instead.`)
    }))

  it.live("a chain of 7 redirects still reaches the page, as a bad redirect", () =>
    Effect.gen(function*() {
      const outcome = yield* checkLink(fleet, `${fleet.http}/redirect/chain/7`)
      expectSingleProblem(outcome, { status: "caution", summary: "Bad redirect", severity: "warning" })
    }))

  it.live("8 redirect hops are a broken redirect, and the ninth URL is not requested", () =>
    Effect.gen(function*() {
      const countsBefore = [2, 1].map((n) => fleet.requestCount(`/redirect/chain/${n}`))
      const outcome = yield* checkLink(fleet, `${fleet.http}/redirect/chain/9`)
      expectSingleProblem(outcome, { status: "broken", summary: "Broken redirect", severity: "error" })
      const countsAfter = [2, 1].map((n) => fleet.requestCount(`/redirect/chain/${n}`))
      expect(countsAfter.map((count, index) => count - (countsBefore[index] ?? 0))).toEqual([1, 0])
    }))

  it.live("the hop limit follows the configuration", () =>
    Effect.gen(function*() {
      const outcome = yield* checkLink(fleet, `${fleet.http}/redirect/chain/3`, { config: { maxRedirects: 3 } })
      expect(outcome.problemSummary).toBe("Broken redirect")
    }))

  it.live("a URL met 5 times in one chain is a loop: broken redirect, after 4 requests", () =>
    Effect.gen(function*() {
      const outcome = yield* checkLink(fleet, `${fleet.http}/redirect/loop`)
      const message = expectSingleProblem(outcome, { status: "broken", summary: "Broken redirect", severity: "error" })
      expect(message).toMatch(/loop/)
      expect(fleet.requestCount("/redirect/loop")).toBe(4)
    }))

  it.live("two pages redirecting to each other are a broken redirect", () =>
    Effect.gen(function*() {
      const outcome = yield* checkLink(fleet, `${fleet.http}/redirect/ping`)
      expectSingleProblem(outcome, { status: "broken", summary: "Broken redirect", severity: "error" })
    }))

  it.live("cookies set along the chain are sent back, so a cookie gate passes", () =>
    Effect.gen(function*() {
      expectOk(yield* checkLink(fleet, `${fleet.http}/cookie-gate`))
      const requests = fleet.requests("/cookie-gate")
      expect(requests.map((request) => request.headers.cookie)).toEqual([undefined, "gate=open"])
    }))

  it.live("cookies do not outlive their chain", () =>
    Effect.gen(function*() {
      const before = fleet.requests("/cookie-gate").length
      yield* checkLink(fleet, `${fleet.http}/cookie-gate`)
      expect(fleet.requests("/cookie-gate")[before]?.headers.cookie).toBeUndefined()
    }))

  describe("problems met on a redirect target say so", () => {
    const targetCases = [
      { location: "mailto:someone@example.org", status: "caution", summary: "Contact details", severity: "warning" },
      { location: "tel:+441234567890", status: "caution", summary: "Contact details", severity: "warning" },
      { location: "file:///etc/hosts", status: "broken", summary: "Not available online", severity: "error" },
      { location: "ftp://files.example.org/a.txt", status: "caution", summary: "Unusual URL", severity: "warning" }
    ] as const
    for (const { location, severity, status, summary } of targetCases) {
      it.live(`a redirect to ${location}: ${summary}, with the redirect variant of the message`, () =>
        Effect.gen(function*() {
          const viaRedirect = yield* checkLink(fleet, redirectTo(location))
          const direct = yield* checkLink(fleet, location)
          const message = expectSingleProblem(viaRedirect, { status, summary, severity })
          expect(message).toMatch(/^This redirects to /)
          expect(message).toContain(location.split(":")[0])
          expect(direct.problemSummary).toBe(summary)
          expect(message).not.toBe([...direct.errors, ...direct.warnings][0])
        }))
    }

    it.live("a redirect to a Location that is not a URL: invalid URL, naming it", () =>
      Effect.gen(function*() {
        const outcome = yield* checkLink(fleet, redirectTo("http://exa mple.org/"))
        const message = expectSingleProblem(outcome, { status: "broken", summary: "Invalid URL", severity: "error" })
        expect(message).toBe("This redirects to http://exa mple.org/, which is not a valid web address.")
      }))

    it.live("a redirect to a missing page: page not found, with the target named", () =>
      Effect.gen(function*() {
        const outcome = yield* checkLink(fleet, redirectTo("/status/404"))
        const message = expectSingleProblem(outcome, { status: "broken", summary: "Page not found", severity: "error" })
        expect(message).toBe(
          `This redirects to ${fleet.http}/status/404, but that page could not be found (error 404).`
        )
      }))

    it.live("a redirect to a URL with login details warns without showing them", () =>
      Effect.gen(function*() {
        const target = fleet.http.replace("http://", "http://someone:hunter2@") + "/ok?redirected-credentials"
        const outcome = yield* checkLink(fleet, redirectTo(target))
        const message = expectSingleProblem(outcome, {
          status: "caution",
          summary: "Login details in URL",
          severity: "warning"
        })
        expect(message).toMatch(/^This redirects to /)
        expect(message).not.toContain("hunter2")
        expect(fleet.requests("/ok?redirected-credentials")[0]?.headers.authorization).toBeUndefined()
      }))

    it.live("a redirect to a suspicious domain is danger, and the target is not requested", () =>
      Effect.gen(function*() {
        const target = `http://www.bad.test:${fleet.httpPort}/ok?suspicious-target`
        const outcome = yield* checkLink(fleet, redirectTo(target), { config: { suspiciousDomains: ["bad.test"] } })
        const message = expectSingleProblem(outcome, {
          status: "broken",
          summary: "Suspicious destination",
          severity: "danger"
        })
        expect(message).toBe(`This redirects to ${target}, which is on the list of suspicious websites.`)
        expect(fleet.requestCount("/ok?suspicious-target")).toBe(0)
      }))

    it.live("a redirect to a server that refuses connections: website unavailable", () =>
      Effect.gen(function*() {
        const outcome = yield* checkLink(fleet, redirectTo(`${fleet.refusedPort}/`))
        const message = expectSingleProblem(outcome, {
          status: "broken",
          summary: "Website unavailable",
          severity: "error"
        })
        expect(message).toMatch(/^This redirects to /)
      }))

    it.live("a redirect to a website with a bad certificate: security problem on the target", () =>
      Effect.gen(function*() {
        const outcome = yield* checkLink(fleet, redirectTo(`${fleet.https}/ok`))
        const message = expectSingleProblem(outcome, {
          status: "caution",
          summary: "Security problem",
          severity: "warning"
        })
        expect(message).toBe(
          `This redirects to ${fleet.https}/ok, but that website's security certificate is not valid, ` +
            "so browsers will warn people that it may not be safe."
        )
      }))
  })

  it.live("problems along a chain are all reported, the most important as the summary", () =>
    Effect.gen(function*() {
      const chainToMissing = `${fleet.http}/redirect/to?location=${encodeURIComponent(redirectTo("/status/410"))}`
      const outcome = yield* checkLink(fleet, chainToMissing)
      expect(outcome.status).toBe("broken")
      expect(outcome.problemSummary).toBe("Page not found")
      expect(outcome.errors).toHaveLength(1)
      expect(outcome.warnings).toHaveLength(1)
      expect(outcome.suggestedFix).toBeNull()
      expectEndUserSentences(outcome)
    }))
})
