import { Data } from "effect"

/** The problems a link check can find, one case per condition of the check table. */
export type Problem = Data.TaggedEnum<{
  InvalidUrl: { readonly reason: "unparseable" | "noScheme" | "noHost" }
  NotAvailableOnline: {}
  ContactDetails: { readonly kind: "email" | "phone" }
  UnusualUrl: { readonly scheme: string }
  SuspiciousDomain: { readonly host: string }
  BrokenRedirect: { readonly reason: "tooManyHops" | "loop" }
  BadRedirect: { readonly hops: number; readonly finalUrl: string }
  LoginDetailsInUrl: {}
  SuspiciousTopLevelDomain: { readonly topLevelDomain: string }
  InternalDomain: { readonly host: string }
  WebsiteUnavailable: {
    readonly reason: "notFound" | "refused" | "reset" | "unreachable" | "connectTimeout" | "responseTimeout"
  }
  SecurityProblem: {}
  PrivateAddress: {}
  ConnectionFailure: {}
  SlowPage: { readonly thresholdMillis: number }
  PageNotFound: { readonly status: number }
  BlocksRobots: { readonly status: number }
  RequiresLogin: { readonly status: number }
  RateLimited: {}
  ClientError: { readonly status: number }
  ServerError: { readonly status: number }
  UnusualStatus: { readonly status: number }
  SuspiciousContent: {}
  MissingSection: { readonly section: string }
  CheckFailed: {}
}>
export const Problem = Data.taggedEnum<Problem>()

export type Severity = "error" | "warning" | "danger"

/** The order of the check table; it decides which problem is the summary when several have the same severity. */
const tableOrder: ReadonlyArray<Problem["_tag"]> = [
  "InvalidUrl",
  "NotAvailableOnline",
  "ContactDetails",
  "UnusualUrl",
  "SuspiciousDomain",
  "BrokenRedirect",
  "BadRedirect",
  "LoginDetailsInUrl",
  "SuspiciousTopLevelDomain",
  "InternalDomain",
  "WebsiteUnavailable",
  "SecurityProblem",
  "PrivateAddress",
  "ConnectionFailure",
  "SlowPage",
  "PageNotFound",
  "BlocksRobots",
  "RequiresLogin",
  "RateLimited",
  "ClientError",
  "ServerError",
  "UnusualStatus",
  "SuspiciousContent",
  "MissingSection",
  "CheckFailed"
]

export interface ProblemDescription {
  readonly severity: Severity
  readonly summary: string
  /** Position in the check table: lower is more important among problems of equal severity. */
  readonly rank: number
  readonly message: string
  readonly suggestedFix: string
}

interface Texts {
  readonly severity: Severity
  readonly summary: string
  /** The message when the problem is on the link itself. */
  readonly direct: string
  /** Completes "This redirects to <target>, ..." for a problem met on a redirect target; absent for problems of the whole chain. */
  readonly onTarget?: string
  readonly suggestedFix: string
}

const formatDuration = (millis: number): string => {
  if (millis < 1000) return `${millis} milliseconds`
  const seconds = Math.round(millis / 100) / 10
  return seconds === 1 ? "1 second" : `${seconds} seconds`
}

const recheckLater = "Check the link again later. If the problem continues, remove the link or link to another page."

const textsOf = Problem.$match({
  InvalidUrl: ({ reason }): Texts => {
    const fixTyping = "Check the link for typing mistakes, or copy the address again from your browser's address bar."
    switch (reason) {
      case "noScheme":
        return {
          severity: "error",
          summary: "Invalid URL",
          direct: "This link is missing https:// or http:// at the start.",
          onTarget: "which is missing https:// or http:// at the start.",
          suggestedFix: "Add https:// to the start of the link."
        }
      case "noHost":
        return {
          severity: "error",
          summary: "Invalid URL",
          direct: "This link has no website name after http:// or https://.",
          onTarget: "which has no website name in it.",
          suggestedFix: fixTyping
        }
      case "unparseable":
        return {
          severity: "error",
          summary: "Invalid URL",
          direct: "This is not a valid web address.",
          onTarget: "which is not a valid web address.",
          suggestedFix: fixTyping
        }
    }
  },
  NotAvailableOnline: (): Texts => ({
    severity: "error",
    summary: "Not available online",
    direct: "This link points to a file on someone's computer, so other people cannot open it.",
    onTarget: "a file on someone's computer that other people cannot open.",
    suggestedFix: "Put the file online and link to it there, or link to a web page instead."
  }),
  ContactDetails: ({ kind }): Texts =>
    kind === "email"
      ? {
        severity: "warning",
        summary: "Contact details",
        direct: "This link starts an email instead of opening a web page.",
        onTarget: "which starts an email instead of opening a web page.",
        suggestedFix: "Check that the email address is right and that the link text says it is an email address."
      }
      : {
        severity: "warning",
        summary: "Contact details",
        direct: "This link starts a phone call instead of opening a web page.",
        onTarget: "which starts a phone call instead of opening a web page.",
        suggestedFix: "Check that the phone number is right and that the link text says it is a phone number."
      },
  UnusualUrl: ({ scheme }): Texts => ({
    severity: "warning",
    summary: "Unusual URL",
    direct: `This link starts with ${scheme}: instead of https://, so it may not open for everyone.`,
    onTarget: `which starts with ${scheme}: instead of https://, so it may not open for everyone.`,
    suggestedFix: "Link to a web page starting with https:// instead, if there is one."
  }),
  SuspiciousDomain: ({ host }): Texts => ({
    severity: "danger",
    summary: "Suspicious destination",
    direct: `This link goes to ${host}, which is on the list of suspicious websites.`,
    onTarget: `which is on the list of suspicious websites.`,
    suggestedFix: "Remove this link."
  }),
  BrokenRedirect: ({ reason }): Texts =>
    reason === "loop"
      ? {
        severity: "error",
        summary: "Broken redirect",
        direct: "This link redirects in a loop and never reaches a page.",
        suggestedFix:
          "Find the page's current address and link to it directly, or ask the website's owner to fix the redirect."
      }
      : {
        severity: "error",
        summary: "Broken redirect",
        direct: "This link redirects too many times without reaching a page, so browsers will give up.",
        suggestedFix: "Find the page's current address and link to it directly."
      },
  BadRedirect: ({ finalUrl, hops }): Texts => ({
    severity: "warning",
    summary: "Bad redirect",
    direct: `This link goes through ${hops} redirects before it reaches the page, which makes it slow and fragile.`,
    suggestedFix: `Link directly to ${finalUrl} instead.`
  }),
  LoginDetailsInUrl: (): Texts => ({
    severity: "warning",
    summary: "Login details in URL",
    direct: "This link contains a username or password, which anyone who sees the link can read.",
    onTarget: "which contains a username or password that anyone who sees the link can read.",
    suggestedFix: "Remove the username and password from the link."
  }),
  SuspiciousTopLevelDomain: ({ topLevelDomain }): Texts => ({
    severity: "warning",
    summary: "Suspicious destination",
    direct: `This link goes to a website ending in .${topLevelDomain}, which is often used for adult content.`,
    onTarget: `a website ending in .${topLevelDomain}, which is often used for adult content.`,
    suggestedFix: "Check that this is the website you meant to link to and that it suits your readers."
  }),
  InternalDomain: ({ host }): Texts => ({
    severity: "warning",
    summary: "Internal domain",
    direct: `This link goes to ${host}, an internal website that people outside your organisation cannot open.`,
    onTarget: "an internal website that people outside your organisation cannot open.",
    suggestedFix: "Link to a page that is open to the public instead."
  }),
  WebsiteUnavailable: ({ reason }): Texts => {
    const unavailable = (direct: string, onTarget: string, suggestedFix = recheckLater): Texts => ({
      severity: "error",
      summary: "Website unavailable",
      direct,
      onTarget,
      suggestedFix
    })
    switch (reason) {
      case "notFound":
        return unavailable(
          "The website could not be found. The address may be mistyped, or the website may no longer exist.",
          "but that website could not be found.",
          "Check the website address. If the website no longer exists, remove the link."
        )
      case "refused":
        return unavailable(
          "The website refused the connection. It may be down, or it may no longer exist.",
          "but that website refused the connection."
        )
      case "reset":
        return unavailable(
          "The website closed the connection before sending the page.",
          "but that website closed the connection before sending the page."
        )
      case "unreachable":
        return unavailable(
          "The website cannot be reached from the internet at the moment.",
          "but that website cannot be reached at the moment."
        )
      case "connectTimeout":
        return unavailable(
          "The website did not accept the connection in time. It may be down or overloaded.",
          "but that website did not accept the connection in time."
        )
      case "responseTimeout":
        return unavailable(
          "The website took too long to respond.",
          "but that website took too long to respond."
        )
    }
  },
  SecurityProblem: (): Texts => ({
    severity: "warning",
    summary: "Security problem",
    direct: "The website's security certificate is not valid, so browsers will warn people that it may not be safe.",
    onTarget: "but that website's security certificate is not valid, so browsers will warn people that it may not be safe.",
    suggestedFix: "Ask the website's owner to fix their security certificate, or link to another page."
  }),
  PrivateAddress: (): Texts => ({
    severity: "error",
    summary: "Private address",
    direct: "This link points to a private network address that people on the internet cannot reach.",
    onTarget: "which points to a private network address that people on the internet cannot reach.",
    suggestedFix: "Link to a public web address instead."
  }),
  ConnectionFailure: (): Texts => ({
    severity: "error",
    summary: "Page unavailable",
    direct: "The page could not be loaded because the connection to the website failed.",
    onTarget: "but that page could not be loaded because the connection to the website failed.",
    suggestedFix: recheckLater
  }),
  SlowPage: ({ thresholdMillis }): Texts => ({
    severity: "warning",
    summary: "Slow page",
    direct: `The page took more than ${formatDuration(thresholdMillis)} to load.`,
    onTarget: `but that page took more than ${formatDuration(thresholdMillis)} to load.`,
    suggestedFix: "Check that the page still works, or link to a faster page with the same content."
  }),
  PageNotFound: ({ status }): Texts =>
    status === 410
      ? {
        severity: "error",
        summary: "Page not found",
        direct: "The page has been removed (error 410).",
        onTarget: "but that page has been removed (error 410).",
        suggestedFix: "Remove the link, or link to a page with similar content."
      }
      : {
        severity: "error",
        summary: "Page not found",
        direct: `The page could not be found (error ${status}).`,
        onTarget: `but that page could not be found (error ${status}).`,
        suggestedFix: "Find out where the content has moved and link there, or remove the link."
      },
  BlocksRobots: ({ status }): Texts => ({
    severity: "warning",
    summary: "Page blocks robots",
    direct: `The website blocks automatic checks (error ${status}), so this page could not be checked.`,
    onTarget: `but that website blocks automatic checks (error ${status}), so the page could not be checked.`,
    suggestedFix: "Open the link in your browser to check that it works."
  }),
  RequiresLogin: ({ status }): Texts => ({
    severity: "error",
    summary: "Page requires login",
    direct: `People need to sign in to see this page (error ${status}).`,
    onTarget: `but people need to sign in to see that page (error ${status}).`,
    suggestedFix: "Link to a page that everyone can see, or tell readers that they need to sign in."
  }),
  RateLimited: (): Texts => ({
    severity: "warning",
    summary: "Rate limited",
    direct: "The website is getting too many requests and asked us to try again later (error 429).",
    onTarget: "but that website is getting too many requests and asked us to try again later (error 429).",
    suggestedFix: "Check the link again later."
  }),
  ClientError: ({ status }): Texts => ({
    severity: "error",
    summary: "Page unavailable",
    direct: `The website refused to show this page (error ${status}).`,
    onTarget: `but that website refused to show the page (error ${status}).`,
    suggestedFix: "Check that the address is right, and open the link in your browser to see what is wrong."
  }),
  ServerError: ({ status }): Texts => ({
    severity: "error",
    summary: "Page unavailable",
    direct: `The website had a problem showing this page (error ${status}).`,
    onTarget: `but that website had a problem showing the page (error ${status}).`,
    suggestedFix: recheckLater
  }),
  UnusualStatus: ({ status }): Texts => ({
    severity: "warning",
    summary: "Page unavailable",
    direct: `The website gave an unusual response (status ${status}), so the page may not show properly.`,
    onTarget: `but that website gave an unusual response (status ${status}), so the page may not show properly.`,
    suggestedFix: "Open the link in your browser to check that it works."
  }),
  SuspiciousContent: (): Texts => ({
    severity: "warning",
    summary: "Suspicious content",
    direct: "The page says that it is only suitable for adults.",
    onTarget: "and that page says that it is only suitable for adults.",
    suggestedFix: "Check that the page suits your readers before you link to it."
  }),
  MissingSection: ({ section }): Texts => ({
    severity: "warning",
    summary: "Missing section",
    direct: `The page has no section called #${section}, so this link opens at the top of the page instead.`,
    suggestedFix: `Find the section on the page and link to its current name, or remove #${section} from the link.`
  }),
  CheckFailed: (): Texts => ({
    severity: "warning",
    summary: "Check failed",
    direct: "We could not complete the check of this link. It may still work.",
    suggestedFix: "Check the link again later."
  })
})

/**
 * Severity, summary and end-user texts of a problem. `redirectTarget` is the address the link redirects to
 * when the problem was met there rather than on the link itself.
 */
export const describeProblem = (problem: Problem, redirectTarget: string | null): ProblemDescription => {
  const texts = textsOf(problem)
  return {
    severity: texts.severity,
    summary: texts.summary,
    rank: tableOrder.indexOf(problem._tag),
    message: redirectTarget === null || texts.onTarget === undefined
      ? texts.direct
      : `This redirects to ${redirectTarget}, ${texts.onTarget}`,
    suggestedFix: texts.suggestedFix
  }
}

export const severityOf = (problem: Problem): Severity => textsOf(problem).severity

/** Orders problems from most to least important: errors first, then the order of the check table. */
export const byImportance = (a: ProblemDescription, b: ProblemDescription): number => {
  const errorFirst = Number(b.severity === "error") - Number(a.severity === "error")
  return errorFirst !== 0 ? errorFirst : a.rank - b.rank
}
