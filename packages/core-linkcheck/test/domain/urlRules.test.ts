import { describe, expect, it } from "@effect/vitest"
import { Problem } from "../../src/domain/problems"
import { assessUrl, displayUrl, matchesDomainSuffix, UrlAssessment } from "../../src/domain/urlRules"

const noLists = { suspiciousDomains: [], internalDomains: [] }

const tagsOf = (assessment: UrlAssessment) => assessment.problems.map((problem) => problem._tag)

describe("assessUrl", () => {
  const refused: ReadonlyArray<readonly [string, Problem]> = [
    ["not a url", Problem.InvalidUrl({ reason: "unparseable" })],
    ["", Problem.InvalidUrl({ reason: "unparseable" })],
    ["http://exa mple.org/", Problem.InvalidUrl({ reason: "unparseable" })],
    ["www.example.org/page", Problem.InvalidUrl({ reason: "noScheme" })],
    ["example.org:8080/page", Problem.InvalidUrl({ reason: "noScheme" })],
    ["http://", Problem.InvalidUrl({ reason: "noHost" })],
    ["https://", Problem.InvalidUrl({ reason: "noHost" })],
    ["http://./", Problem.InvalidUrl({ reason: "noHost" })],
    ["file:///etc/hosts", Problem.NotAvailableOnline()],
    ["FILE://server/share/doc.pdf", Problem.NotAvailableOnline()],
    ["mailto:someone@example.org", Problem.ContactDetails({ kind: "email" })],
    ["tel:+441234567890", Problem.ContactDetails({ kind: "phone" })],
    ["ftp://example.org/file", Problem.UnusualUrl({ scheme: "ftp" })],
    ["javascript:void(0)", Problem.UnusualUrl({ scheme: "javascript" })]
  ]
  for (const [input, problem] of refused) {
    it(`"${input}" is not requested: ${problem._tag}`, () => {
      expect(assessUrl(input, noLists)).toEqual(UrlAssessment.DoNotRequest({ problems: [problem] }))
    })
  }

  it("an http(s) URL is requested without problems", () => {
    const assessment = assessUrl("https://www.example.org/a?b=c#part", noLists)
    expect(assessment._tag).toBe("Request")
    expect(assessment.problems).toEqual([])
    if (assessment._tag === "Request") expect(assessment.url.href).toBe("https://www.example.org/a?b=c")
  })

  it("login details are a warning and are removed from the URL to request", () => {
    const assessment = assessUrl("https://user:secret@example.org/private", noLists)
    expect(tagsOf(assessment)).toEqual(["LoginDetailsInUrl"])
    if (assessment._tag === "Request") expect(assessment.url.href).toBe("https://example.org/private")
    expect(tagsOf(assessment)).toEqual(tagsOf(assessUrl("https://user@example.org/", noLists)))
  })

  it("adult top-level domains are a warning, and the URL is still requested", () => {
    for (const tld of ["xxx", "adult", "dating", "porn", "sex", "sexy", "singles"]) {
      const assessment = assessUrl(`http://www.example.${tld}./`, noLists)
      expect(assessment._tag).toBe("Request")
      expect(assessment.problems).toEqual([Problem.SuspiciousTopLevelDomain({ topLevelDomain: tld })])
    }
    expect(assessUrl("http://xxx.example.org/", noLists).problems).toEqual([])
  })

  it("a suspicious domain suffix is danger and nothing is requested", () => {
    const lists = { suspiciousDomains: ["evil.example"], internalDomains: [] }
    expect(assessUrl("https://login.evil.example/", lists)).toEqual(
      UrlAssessment.DoNotRequest({ problems: [Problem.SuspiciousDomain({ host: "login.evil.example" })] })
    )
    expect(assessUrl("https://notevil.example/", lists)._tag).toBe("Request")
  })

  it("an internal domain suffix is a warning, and the URL is still requested", () => {
    const assessment = assessUrl("http://wiki.corp.example/page", {
      suspiciousDomains: [],
      internalDomains: ["corp.example"]
    })
    expect(assessment._tag).toBe("Request")
    expect(assessment.problems).toEqual([Problem.InternalDomain({ host: "wiki.corp.example" })])
  })

  it("several warnings on one URL are all reported", () => {
    const assessment = assessUrl("http://me:pw@club.corp.dating/", {
      suspiciousDomains: [],
      internalDomains: ["corp.dating"]
    })
    expect(tagsOf(assessment)).toEqual(["LoginDetailsInUrl", "SuspiciousTopLevelDomain", "InternalDomain"])
  })
})

describe("matchesDomainSuffix", () => {
  it("matches the domain itself and its subdomains, not look-alikes", () => {
    expect(matchesDomainSuffix("example.org", "example.org")).toBe(true)
    expect(matchesDomainSuffix("a.b.example.org", "example.org")).toBe(true)
    expect(matchesDomainSuffix("badexample.org", "example.org")).toBe(false)
    expect(matchesDomainSuffix("example.org.evil.net", "example.org")).toBe(false)
  })

  it("ignores case, leading and trailing dots", () => {
    expect(matchesDomainSuffix("WWW.Example.ORG.", ".example.org.")).toBe(true)
    expect(matchesDomainSuffix("www.example.org", "EXAMPLE.org")).toBe(true)
  })

  it("matches internationalised names in either form", () => {
    expect(matchesDomainSuffix("www.xn--bcher-kva.example", "bücher.example")).toBe(true)
  })

  it("an empty suffix matches nothing", () => {
    expect(matchesDomainSuffix("example.org", "")).toBe(false)
    expect(matchesDomainSuffix("example.org", " . ")).toBe(false)
  })
})

describe("displayUrl", () => {
  it("never shows login details", () => {
    expect(displayUrl(new URL("https://user:secret@example.org/a"))).toBe("https://example.org/a")
    expect(displayUrl(new URL("https://example.org/a"))).toBe("https://example.org/a")
  })
})
