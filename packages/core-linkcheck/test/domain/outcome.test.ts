import { describe, expect, it } from "@effect/vitest"
import { assembleOutcome, checkFailedOutcome, finding } from "../../src/domain/outcome"
import { byImportance, describeProblem, Problem } from "../../src/domain/problems"

const everyProblem: ReadonlyArray<Problem> = [
  Problem.InvalidUrl({ reason: "unparseable" }),
  Problem.InvalidUrl({ reason: "noScheme" }),
  Problem.InvalidUrl({ reason: "noHost" }),
  Problem.NotAvailableOnline(),
  Problem.ContactDetails({ kind: "email" }),
  Problem.ContactDetails({ kind: "phone" }),
  Problem.UnusualUrl({ scheme: "ftp" }),
  Problem.SuspiciousDomain({ host: "evil.example" }),
  Problem.BrokenRedirect({ reason: "tooManyHops" }),
  Problem.BrokenRedirect({ reason: "loop" }),
  Problem.BadRedirect({ hops: 3, finalUrl: "https://example.org/final" }),
  Problem.LoginDetailsInUrl(),
  Problem.SuspiciousTopLevelDomain({ topLevelDomain: "xxx" }),
  Problem.InternalDomain({ host: "wiki.corp" }),
  Problem.WebsiteUnavailable({ reason: "notFound" }),
  Problem.WebsiteUnavailable({ reason: "refused" }),
  Problem.WebsiteUnavailable({ reason: "reset" }),
  Problem.WebsiteUnavailable({ reason: "unreachable" }),
  Problem.WebsiteUnavailable({ reason: "connectTimeout" }),
  Problem.WebsiteUnavailable({ reason: "responseTimeout" }),
  Problem.SecurityProblem(),
  Problem.PrivateAddress(),
  Problem.ConnectionFailure(),
  Problem.SlowPage({ thresholdMillis: 5000 }),
  Problem.PageNotFound({ status: 404 }),
  Problem.PageNotFound({ status: 410 }),
  Problem.BlocksRobots({ status: 403 }),
  Problem.RequiresLogin({ status: 401 }),
  Problem.RateLimited(),
  Problem.ClientError({ status: 418 }),
  Problem.ServerError({ status: 500 }),
  Problem.UnusualStatus({ status: 204 }),
  Problem.SuspiciousContent(),
  Problem.CheckFailed()
]

describe("describeProblem", () => {
  it("gives the severity and summary of the check table", () => {
    const table = everyProblem.map((problem) => {
      const { severity, summary } = describeProblem(problem, null)
      return `${problem._tag}: ${severity} ${summary}`
    })
    expect(new Set(table)).toEqual(
      new Set([
        "InvalidUrl: error Invalid URL",
        "NotAvailableOnline: error Not available online",
        "ContactDetails: warning Contact details",
        "UnusualUrl: warning Unusual URL",
        "SuspiciousDomain: danger Suspicious destination",
        "BrokenRedirect: error Broken redirect",
        "BadRedirect: warning Bad redirect",
        "LoginDetailsInUrl: warning Login details in URL",
        "SuspiciousTopLevelDomain: warning Suspicious destination",
        "InternalDomain: warning Internal domain",
        "WebsiteUnavailable: error Website unavailable",
        "SecurityProblem: warning Security problem",
        "PrivateAddress: error Private address",
        "ConnectionFailure: error Page unavailable",
        "SlowPage: warning Slow page",
        "PageNotFound: error Page not found",
        "BlocksRobots: warning Page blocks robots",
        "RequiresLogin: error Page requires login",
        "RateLimited: warning Rate limited",
        "ClientError: error Page unavailable",
        "ServerError: error Page unavailable",
        "UnusualStatus: warning Page unavailable",
        "SuspiciousContent: warning Suspicious content",
        "CheckFailed: warning Check failed"
      ])
    )
  })

  it("writes a distinct end-user sentence and a fix for every problem", () => {
    const messages = everyProblem.map((problem) => describeProblem(problem, null).message)
    expect(new Set(messages).size).toBe(everyProblem.length)
    for (const problem of everyProblem) {
      const { message, suggestedFix } = describeProblem(problem, null)
      expect(message).toMatch(/^[A-Z].{10,}[.)]$/)
      expect(suggestedFix).toMatch(/^[A-Z].{5,}\.$/)
    }
  })

  it("says when a problem was met on a redirect target, naming the target", () => {
    const chainWide = new Set(["BrokenRedirect", "BadRedirect", "CheckFailed"])
    for (const problem of everyProblem.filter(({ _tag }) => !chainWide.has(_tag))) {
      const direct = describeProblem(problem, null).message
      const onTarget = describeProblem(problem, "https://example.org/moved").message
      expect(onTarget).toMatch(/^This redirects to https:\/\/example\.org\/moved, .+[.)]$/)
      expect(onTarget).not.toBe(direct)
    }
  })

  it("suggests linking directly to the end of a redirect chain", () => {
    const { suggestedFix } = describeProblem(Problem.BadRedirect({ hops: 2, finalUrl: "https://example.org/new" }), null)
    expect(suggestedFix).toBe("Link directly to https://example.org/new instead.")
  })
})

describe("byImportance", () => {
  const ordered = (problems: ReadonlyArray<Problem>) =>
    problems.map((problem) => describeProblem(problem, null)).sort(byImportance).map(({ summary }) => summary)

  it("puts errors first, then follows the order of the table", () => {
    expect(ordered([
      Problem.SlowPage({ thresholdMillis: 5000 }),
      Problem.PageNotFound({ status: 404 }),
      Problem.LoginDetailsInUrl(),
      Problem.SecurityProblem(),
      Problem.PrivateAddress()
    ])).toEqual(["Private address", "Page not found", "Login details in URL", "Security problem", "Slow page"])
  })

  it("puts an error after a warning row of the table still before that warning", () => {
    expect(ordered([Problem.ContactDetails({ kind: "email" }), Problem.ServerError({ status: 500 })]))
      .toEqual(["Page unavailable", "Contact details"])
  })

  it("ranks danger by its place in the table among the warnings", () => {
    expect(ordered([Problem.InternalDomain({ host: "x" }), Problem.SuspiciousDomain({ host: "y" })]))
      .toEqual(["Suspicious destination", "Internal domain"])
  })
})

describe("assembleOutcome", () => {
  it("no problems: ok, with nothing to show", () => {
    expect(assembleOutcome([])).toEqual({
      status: "ok",
      errors: [],
      warnings: [],
      danger: [],
      problemSummary: null,
      suggestedFix: null
    })
  })

  it("one warning: caution, with its summary and fix", () => {
    const outcome = assembleOutcome([finding(Problem.RateLimited())])
    const described = describeProblem(Problem.RateLimited(), null)
    expect(outcome).toEqual({
      status: "caution",
      errors: [],
      warnings: [described.message],
      danger: [],
      problemSummary: "Rate limited",
      suggestedFix: described.suggestedFix
    })
  })

  it("any error: broken, the most important problem as the summary, no fix when there are several", () => {
    const outcome = assembleOutcome([
      finding(Problem.LoginDetailsInUrl()),
      finding(Problem.SecurityProblem(), "https://example.org/b"),
      finding(Problem.PageNotFound({ status: 404 }), "https://example.org/b")
    ])
    expect(outcome.status).toBe("broken")
    expect(outcome.errors).toHaveLength(1)
    expect(outcome.warnings).toHaveLength(2)
    expect(outcome.problemSummary).toBe("Page not found")
    expect(outcome.suggestedFix).toBeNull()
  })

  it("danger goes in its own list and makes the link broken", () => {
    const outcome = assembleOutcome([finding(Problem.SuspiciousDomain({ host: "evil.example" }))])
    expect(outcome.status).toBe("broken")
    expect(outcome.danger).toHaveLength(1)
    expect(outcome.errors).toEqual([])
    expect(outcome.problemSummary).toBe("Suspicious destination")
    expect(outcome.suggestedFix).toBe("Remove this link.")
  })

  it("the same message twice counts once, so the fix is still given", () => {
    const outcome = assembleOutcome([finding(Problem.LoginDetailsInUrl()), finding(Problem.LoginDetailsInUrl())])
    expect(outcome.warnings).toHaveLength(1)
    expect(outcome.suggestedFix).not.toBeNull()
  })

  it("the same problem on the link and on a redirect target is two messages, so no fix", () => {
    const outcome = assembleOutcome([
      finding(Problem.LoginDetailsInUrl()),
      finding(Problem.LoginDetailsInUrl(), "https://example.org/next")
    ])
    expect(outcome.warnings).toHaveLength(2)
    expect(outcome.suggestedFix).toBeNull()
  })

  it("a check that could not be completed is a caution saying so", () => {
    expect(checkFailedOutcome.status).toBe("caution")
    expect(checkFailedOutcome.problemSummary).toBe("Check failed")
    expect(checkFailedOutcome.warnings).toEqual(["We could not complete the check of this link. It may still work."])
  })
})
