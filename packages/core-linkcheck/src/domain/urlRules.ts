import { Data } from "effect"
import { Problem } from "./problems"

export interface DomainLists {
  /** Domain suffixes whose links are dangerous: reported as danger and never requested. */
  readonly suspiciousDomains: ReadonlyArray<string>
  /** Domain suffixes of internal websites: reported as a warning, still requested. */
  readonly internalDomains: ReadonlyArray<string>
}

/** What the URL rules decide before any request is made. */
export type UrlAssessment = Data.TaggedEnum<{
  /** Nothing may be requested; the problems say why. */
  DoNotRequest: { readonly problems: ReadonlyArray<Problem> }
  /** `url` (without credentials or fragment) may be requested; the problems are warnings about the link. */
  Request: { readonly url: URL; readonly problems: ReadonlyArray<Problem> }
}>
export const UrlAssessment = Data.taggedEnum<UrlAssessment>()

export const adultTopLevelDomains: ReadonlySet<string> = new Set([
  "xxx",
  "adult",
  "dating",
  "porn",
  "sex",
  "sexy",
  "singles"
])

const parse = (input: string): URL | null => {
  try {
    return new URL(input)
  } catch {
    return null
  }
}

const withoutTrailingDot = (host: string): string => (host.endsWith(".") ? host.slice(0, -1) : host)

const normaliseSuffix = (suffix: string): string => {
  const trimmed = suffix.trim().toLowerCase().replace(/^\.+/, "").replace(/\.+$/, "")
  return parse(`http://${trimmed}/`)?.hostname ?? trimmed
}

/** True when `host` is `suffix` or a subdomain of it (`example.com` matches `www.example.com`, not `badexample.com`). */
export const matchesDomainSuffix = (host: string, suffix: string): boolean => {
  const normalisedHost = withoutTrailingDot(host.toLowerCase())
  const normalisedSuffix = normaliseSuffix(suffix)
  if (normalisedSuffix === "") return false
  return normalisedHost === normalisedSuffix || normalisedHost.endsWith(`.${normalisedSuffix}`)
}

const invalidReason = (input: string): "unparseable" | "noScheme" | "noHost" => {
  const trimmed = input.trim()
  if (/^https?:\/*(?:[?#]|$)/i.test(trimmed)) return "noHost"
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed)) return "unparseable"
  const withScheme = parse(`https://${trimmed}`)
  const looksLikeWebAddress = withScheme !== null &&
    (withScheme.hostname.includes(".") || withScheme.hostname === "localhost")
  return looksLikeWebAddress ? "noScheme" : "unparseable"
}

/** The URL to request: credentials and fragment removed, since neither may be sent. */
const requestableUrl = (url: URL): URL => {
  // the usual link has neither, and each change below makes the URL serialise itself again
  if (url.username === "" && url.password === "" && url.hash === "") return url
  const copy = new URL(url.href)
  copy.username = ""
  copy.password = ""
  copy.hash = ""
  return copy
}

/** The URL as it may be shown to people: without any username or password. */
export const displayUrl = (url: URL): string => {
  if (url.username === "" && url.password === "") return url.href
  const copy = new URL(url.href)
  copy.username = ""
  copy.password = ""
  return copy.href
}

/** Applies the URL rules of the check table to a link or a redirect target. */
export const assessUrl = (input: string, lists: DomainLists): UrlAssessment => {
  const refuse = (problem: Problem) => UrlAssessment.DoNotRequest({ problems: [problem] })
  const url = parse(input)
  // "example.com:8080/page" parses with the scheme "example.com:", but it is a web address missing its scheme.
  if (url === null || url.protocol.includes(".")) return refuse(Problem.InvalidUrl({ reason: invalidReason(input) }))

  const scheme = url.protocol.slice(0, -1).toLowerCase()
  if (scheme === "file") return refuse(Problem.NotAvailableOnline())
  if (scheme === "mailto") return refuse(Problem.ContactDetails({ kind: "email" }))
  if (scheme === "tel") return refuse(Problem.ContactDetails({ kind: "phone" }))
  if (scheme !== "http" && scheme !== "https") return refuse(Problem.UnusualUrl({ scheme }))

  const host = withoutTrailingDot(url.hostname)
  if (host === "") return refuse(Problem.InvalidUrl({ reason: "noHost" }))
  if (lists.suspiciousDomains.some((suffix) => matchesDomainSuffix(host, suffix))) {
    return refuse(Problem.SuspiciousDomain({ host }))
  }

  const problems: Array<Problem> = []
  if (url.username !== "" || url.password !== "") problems.push(Problem.LoginDetailsInUrl())
  const topLevelDomain = host.split(".").at(-1) ?? ""
  if (adultTopLevelDomains.has(topLevelDomain)) problems.push(Problem.SuspiciousTopLevelDomain({ topLevelDomain }))
  if (lists.internalDomains.some((suffix) => matchesDomainSuffix(host, suffix))) {
    problems.push(Problem.InternalDomain({ host }))
  }
  return UrlAssessment.Request({ url: requestableUrl(url), problems })
}
