import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Logger, LogLevel } from "effect"
import { LinkInspector } from "../../../src/services/LinkInspector"
import type { InspectorConfig } from "../../../src/services/LinkInspector"
import { startFixtureFleet } from "../../fixtures/fleet"
import type { FixtureFleet } from "../../fixtures/fleet"
import { checkLink, expectEndUserSentences, expectSingleProblem, testConfig } from "./support"

let fleet: FixtureFleet
beforeAll(async () => {
  fleet = await startFixtureFleet()
})
afterAll(() => fleet.close())

describe("LinkInspector: connections", () => {
  it.live("a refused connection: website unavailable", () =>
    Effect.gen(function*() {
      const outcome = yield* checkLink(fleet, `${fleet.refusedPort}/`)
      expectSingleProblem(outcome, { status: "broken", summary: "Website unavailable", severity: "error" })
    }))

  it.live("a connection reset: website unavailable", () =>
    Effect.gen(function*() {
      const outcome = yield* checkLink(fleet, `${fleet.http}/reset`)
      expectSingleProblem(outcome, { status: "broken", summary: "Website unavailable", severity: "error" })
    }))

  it.live("any other transport failure (the server hangs up without answering): page unavailable", () =>
    Effect.gen(function*() {
      const outcome = yield* checkLink(fleet, `${fleet.http}/hang-up`)
      expectSingleProblem(outcome, { status: "broken", summary: "Page unavailable", severity: "error" })
    }))

  it.live("a host that does not resolve (lookup override): website unavailable", () =>
    Effect.gen(function*() {
      const outcome = yield* checkLink(fleet, "http://does-not-exist.invalid/")
      expectSingleProblem(outcome, { status: "broken", summary: "Website unavailable", severity: "error" })
    }))

  it.live("a host that does not resolve (system resolver): website unavailable", () =>
    Effect.gen(function*() {
      const outcome = yield* checkLink(fleet, "http://does-not-exist.invalid/", { systemResolver: true })
      expectSingleProblem(outcome, { status: "broken", summary: "Website unavailable", severity: "error" })
    }))

  it.live("a server that accepts but never answers: website unavailable after the response timeout", () =>
    Effect.gen(function*() {
      const [elapsed, outcome] = yield* Effect.timed(checkLink(fleet, `${fleet.silent}/`))
      const timedOut = expectSingleProblem(outcome, { status: "broken", summary: "Website unavailable", severity: "error" })
      const refused = yield* checkLink(fleet, `${fleet.refusedPort}/`)
      expect(timedOut).not.toBe(refused.errors[0])
      expect(Duration.toMillis(elapsed)).toBeGreaterThanOrEqual(900)
      expect(Duration.toMillis(elapsed)).toBeLessThan(5_000)
    }))

  it.live("a TLS handshake that never completes: website unavailable after the connect timeout", () =>
    Effect.gen(function*() {
      const outcome = yield* checkLink(fleet, `${fleet.silent.replace("http:", "https:")}/`)
      const connectTimedOut = expectSingleProblem(outcome, {
        status: "broken",
        summary: "Website unavailable",
        severity: "error"
      })
      const responseTimedOut = yield* checkLink(fleet, `${fleet.silent}/`)
      expect(connectTimedOut).not.toBe(responseTimedOut.errors[0])
    }))

  it.live("a self-signed certificate: security problem, and the page is still checked", () =>
    Effect.gen(function*() {
      const outcome = yield* checkLink(fleet, `${fleet.https}/ok?tls`)
      expectSingleProblem(outcome, { status: "caution", summary: "Security problem", severity: "warning" })
      expect(fleet.requestCount("/ok?tls")).toBe(1)

      const missing = yield* checkLink(fleet, `${fleet.https}/status/404`)
      expect(missing.status).toBe("broken")
      expect(missing.problemSummary).toBe("Page not found")
      expect(missing.warnings).toHaveLength(1)
      expect(missing.suggestedFix).toBeNull()
      expectEndUserSentences(missing)
    }))

  it.live("a chain staying on a website with a bad certificate reports the security problem once", () =>
    Effect.gen(function*() {
      const outcome = yield* checkLink(fleet, `${fleet.https}/redirect/chain/1`)
      expectSingleProblem(outcome, { status: "caution", summary: "Security problem", severity: "warning" })
    }))

  it.live("connections are kept alive and reused between checks", () =>
    Effect.gen(function*() {
      const before = fleet.httpConnectionCount()
      const inspector = yield* LinkInspector
      for (let n = 1; n <= 10; n++) {
        expect((yield* inspector.inspect(`${fleet.http}/ok?reuse=${n}`, { background: false })).result.status).toBe("ok")
      }
      // undici may open a second connection while the first is being handed back to the pool.
      expect(fleet.httpConnectionCount() - before).toBeLessThanOrEqual(2)
    }).pipe(Effect.provide(LinkInspector.layer(testConfig(fleet)))))

  it.live("no more than perHostConnections connections are opened to one origin", () =>
    Effect.gen(function*() {
      const before = fleet.httpConnectionCount()
      const inspector = yield* LinkInspector
      const outcomes = yield* Effect.forEach(
        [1, 2, 3, 4, 5, 6, 7, 8],
        (n) => Effect.map(inspector.inspect(`${fleet.http}/slow?ms=50&n=${n}`, { background: false }), ({ result }) => result),
        { concurrency: "unbounded" }
      )
      expect(outcomes.map((outcome) => outcome.status)).toEqual(Array(8).fill("ok"))
      expect(fleet.httpConnectionCount() - before).toBe(2)
    }).pipe(Effect.provide(LinkInspector.layer(testConfig(fleet, { perHostConnections: 2, slowThreshold: "10 seconds" })))))
})

describe("LinkInspector: private address guard (allowPrivateAddresses false)", () => {
  const guarded = { allowPrivateAddresses: false }
  const cases = [
    { name: "an IPv4 loopback literal", uri: () => `${fleet.http}/ok?guard-literal` },
    { name: "an IPv6 loopback literal", uri: () => `http://[::1]:${fleet.httpPort}/ok?guard-v6` },
    { name: "the metadata address", uri: () => "http://169.254.169.254/latest/meta-data/" },
    { name: "an IPv4-mapped IPv6 loopback", uri: () => `http://[::ffff:127.0.0.1]:${fleet.httpPort}/ok?guard-mapped` }
  ]
  for (const { name, uri } of cases) {
    it.live(`${name}: private address, nothing requested`, () =>
      Effect.gen(function*() {
        const outcome = yield* checkLink(fleet, uri(), { config: guarded })
        expectSingleProblem(outcome, { status: "broken", summary: "Private address", severity: "error" })
      }))
  }

  it.live("a name resolving to a private address (lookup override): private address", () =>
    Effect.gen(function*() {
      const outcome = yield* checkLink(fleet, `http://intranet.test:${fleet.httpPort}/ok?guard-ten`, {
        config: { ...guarded, lookup: async () => [{ address: "10.1.2.3", family: 4 }] }
      })
      expectSingleProblem(outcome, { status: "broken", summary: "Private address", severity: "error" })
    }))

  it.live("a name resolving to public and private addresses at once: private address", () =>
    Effect.gen(function*() {
      const outcome = yield* checkLink(fleet, `http://mixed.test:${fleet.httpPort}/ok?guard-mixed`, {
        config: {
          ...guarded,
          lookup: async () => [{ address: "93.184.216.34", family: 4 }, { address: "fd00:ec2::254", family: 6 }]
        }
      })
      expectSingleProblem(outcome, { status: "broken", summary: "Private address", severity: "error" })
    }))

  it.live("localhost through the system resolver: private address, nothing requested", () =>
    Effect.gen(function*() {
      const outcome = yield* checkLink(fleet, `http://localhost:${fleet.httpPort}/ok?guard-localhost`, {
        config: guarded,
        systemResolver: true
      })
      expectSingleProblem(outcome, { status: "broken", summary: "Private address", severity: "error" })
      expect(fleet.requestCount("/ok?guard-localhost")).toBe(0)
    }))

  it.live("nothing reached the fixture while guarded", () =>
    Effect.sync(() => {
      expect(["/ok?guard-literal", "/ok?guard-v6", "/ok?guard-ten", "/ok?guard-mapped", "/ok?guard-mixed"].map(fleet.requestCount))
        .toEqual([0, 0, 0, 0, 0])
    }))
})

describe("LinkInspector: URL rules", () => {
  const noRequestCases = [
    { uri: "not a url at all", status: "broken", summary: "Invalid URL", severity: "error" },
    { uri: "www.example.org/page", status: "broken", summary: "Invalid URL", severity: "error" },
    { uri: "http://", status: "broken", summary: "Invalid URL", severity: "error" },
    { uri: "file:///C:/Users/me/report.pdf", status: "broken", summary: "Not available online", severity: "error" },
    { uri: "mailto:someone@example.org", status: "caution", summary: "Contact details", severity: "warning" },
    { uri: "tel:+441234567890", status: "caution", summary: "Contact details", severity: "warning" },
    { uri: "ftp://files.example.org/a.txt", status: "caution", summary: "Unusual URL", severity: "warning" },
    { uri: "javascript:alert(1)", status: "caution", summary: "Unusual URL", severity: "warning" }
  ] as const
  for (const { severity, status, summary, uri } of noRequestCases) {
    it.live(`${uri}: ${summary}`, () =>
      Effect.gen(function*() {
        expectSingleProblem(yield* checkLink(fleet, uri), { status, summary, severity })
      }))
  }

  it.live("a link without a scheme says to add one", () =>
    Effect.gen(function*() {
      const outcome = yield* checkLink(fleet, "www.example.org/page")
      expect(outcome.suggestedFix).toMatch(/https:\/\//)
    }))

  it.live("a host on the suspicious-domain list is danger, and is not requested", () =>
    Effect.gen(function*() {
      const outcome = yield* checkLink(fleet, `http://www.bad.test:${fleet.httpPort}/ok?suspicious`, {
        config: { suspiciousDomains: [".BAD.test"] }
      })
      expectSingleProblem(outcome, { status: "broken", summary: "Suspicious destination", severity: "danger" })
      expect(fleet.requestCount("/ok?suspicious")).toBe(0)
    }))

  it.live("a host that only ends with the same letters as a suspicious domain is checked as usual", () =>
    Effect.gen(function*() {
      const outcome = yield* checkLink(fleet, `http://notbad.test:${fleet.httpPort}/ok?lookalike`, {
        config: { suspiciousDomains: ["bad.test"] }
      })
      expect(outcome.status).toBe("ok")
      expect(fleet.requestCount("/ok?lookalike")).toBe(1)
    }))

  it.live("a host under an internal domain is a warning, and is still requested", () =>
    Effect.gen(function*() {
      const outcome = yield* checkLink(fleet, `http://wiki.corp.test:${fleet.httpPort}/ok?internal`, {
        config: { internalDomains: ["corp.test"] }
      })
      expectSingleProblem(outcome, { status: "caution", summary: "Internal domain", severity: "warning" })
      expect(fleet.requestCount("/ok?internal")).toBe(1)
    }))

  for (const topLevelDomain of ["xxx", "adult", "dating", "porn", "sex", "sexy", "singles"]) {
    it.live(`a website under .${topLevelDomain} is a suspicious destination, and is still requested`, () =>
      Effect.gen(function*() {
        const path = `/ok?tld=${topLevelDomain}`
        const outcome = yield* checkLink(fleet, `http://example.${topLevelDomain}:${fleet.httpPort}${path}`)
        expectSingleProblem(outcome, { status: "caution", summary: "Suspicious destination", severity: "warning" })
        expect(fleet.requestCount(path)).toBe(1)
      }))
  }
})

describe("LinkInspector: internal failures", () => {
  it.live("a defect inside a check becomes the check-failed warning, not a failure", () =>
    Effect.gen(function*() {
      const outcome = yield* checkLink(fleet, `${fleet.http}/ok?defect`, {
        config: { slowThreshold: "whenever it suits" as Duration.DurationInput }
      }).pipe(Logger.withMinimumLogLevel(LogLevel.None))
      expectSingleProblem(outcome, { status: "caution", summary: "Check failed", severity: "warning" })
      expect(outcome.warnings[0]).toMatch(/^We could not complete the check of this link/)
    }))
})

describe("LinkInspector: sites that take their time", () => {
  const waitUntil = (done: () => boolean, millis: number) =>
    Effect.promise(async () => {
      const deadline = Date.now() + millis
      while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
      return done()
    })

  /** One inspector for the whole test, so that its connections outlive each check. */
  const withInspector = (config: Partial<InspectorConfig>) => Effect.provide(LinkInspector.layer(testConfig(fleet, config)))

  for (const type of ["text", "html"]) {
    it.live(`a page that drips its ${type} body keeps its connection no longer than the check needs`, () =>
      Effect.gen(function*() {
        const host = `drip-${type}.test:${fleet.httpPort}`
        const inspector = yield* LinkInspector
        const { result: outcome } = yield* inspector.inspect(`http://${host}/drip?every=100&type=${type}`, { background: false })
        expect(outcome.status).toBe("ok")
        // it would drip for ever; the checker lets the rest through for at most a second, then cuts it off
        expect(fleet.requestsInProgress(host)).toBe(1)
        expect(yield* waitUntil(() => fleet.requestsInProgress(host) === 0, 3_000)).toBe(true)
      }).pipe(withInspector({})))
  }

  it.live("a check ends at its deadline, however its time went: slow redirects, then a slow page", () =>
    Effect.gen(function*() {
      const slowPage = `${fleet.http}/slow?ms=400&deadline`
      const chain = `${fleet.http}/redirect/to?location=${encodeURIComponent(`${fleet.http}/redirect/to?location=${encodeURIComponent(slowPage)}`)}`
      const outcome = yield* checkLink(fleet, chain, { config: { responseTimeout: "5 seconds", checkTimeout: "300 millis" } })
      expectSingleProblem(outcome, { status: "broken", summary: "Website unavailable", severity: "error" })
      expect(fleet.requestCount("/slow?ms=400&deadline")).toBe(1)
    }))

  it.live("waiting for one of the site's connections counts against the check's deadline", () =>
    Effect.gen(function*() {
      const host = `one-connection.test:${fleet.httpPort}`
      const inspector = yield* LinkInspector
      const holding = yield* Effect.fork(inspector.inspect(`http://${host}/slow?ms=5000&holding`, { background: false }))
      yield* waitUntil(() => fleet.requestCount("/slow?ms=5000&holding") === 1, 2_000)
      yield* Effect.sleep("400 millis")
      // its connection frees when the first check's deadline ends it; it then needs 800 ms more than it has left
      const { result: waiting } = yield* inspector.inspect(`http://${host}/slow?ms=800&waiting`, { background: false })
      expectSingleProblem(waiting, { status: "broken", summary: "Website unavailable", severity: "error" })
      expect((yield* holding).result.status).toBe("broken")
    }).pipe(withInspector({ perHostConnections: 1, responseTimeout: "10 seconds", checkTimeout: "1 second" })))
})
