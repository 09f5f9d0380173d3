import { isIpAddress, isPublicAddress, OutboundFailure } from "@civicstack/outbound"
import type { OutboundFailureReason } from "@civicstack/outbound"
import { Clock, Duration, Effect } from "effect"
import { finding } from "../../domain/outcome"
import type { Finding } from "../../domain/outcome"
import { Problem, severityOf } from "../../domain/problems"
import {
  hasMatureRating,
  isFollowableRedirect,
  isHtml,
  isRetriedInBackground,
  problemForStatus
} from "../../domain/responseRules"
import { assessUrl, displayUrl } from "../../domain/urlRules"
import type { InspectorConfig } from "../../settings"
import { chainCookies } from "./cookieJar"
import { retryDelay } from "./retryDelay"
import type { Transport } from "./transport"

/** The rating check reads no more of an HTML page than this. */
const ratingWindowBytes = 64 * 1024

/** Only an HTML page that answered 200 is read, for its rating. */
const ratingWindow = (status: number, contentType: string | undefined): number =>
  status === 200 && isHtml(contentType) ? ratingWindowBytes : 0

/** The same URL this many times in one chain is a redirect loop. */
const loopVisits = 5

/** What the check needs from one response. */
interface Exchange {
  readonly status: number
  readonly location: string | undefined
  readonly setCookies: ReadonlyArray<string>
  readonly cfMitigated: string | undefined
  readonly retryAfter: string | undefined
  readonly matureRating: boolean
  readonly anchors: ReadonlyArray<string> | null
  readonly slow: boolean
}

/** A link or redirect target to visit; `shownAs` is how a redirect target appears in messages, null for the link. */
interface Stop {
  readonly input: string
  readonly shownAs: string | null
}

const problemForFailure = (reason: OutboundFailureReason): Problem => {
  switch (reason) {
    case "invalidUrl":
      return Problem.InvalidUrl({ reason: "unparseable" })
    case "privateAddress":
      return Problem.PrivateAddress()
    case "certificate":
      return Problem.SecurityProblem()
    case "dnsFailure":
      return Problem.WebsiteUnavailable({ reason: "notFound" })
    case "refused":
    case "reset":
    case "unreachable":
    case "connectTimeout":
    case "responseTimeout":
      return Problem.WebsiteUnavailable({ reason })
    case "bodyTooLarge":
    case "other":
      return Problem.ConnectionFailure()
  }
}

const resolveLocation = (location: string, base: URL): URL | null => {
  try {
    return new URL(location.trim(), base)
  } catch {
    return null
  }
}

export interface FollowOptions {
  readonly background: boolean
  /** Of the check's time on the network, what it already spent waiting before its first request. */
  readonly timeSpentMillis: number
  /**
   * Read the anchors of the page the link ends on, if it is an HTML page that answers 200 and no redirect on the way
   * named a section of its own.
   */
  readonly readsAnchors: boolean
}

/** Every problem met on the way, and the anchors of the page at the end when they were asked for and read. */
export interface Followed {
  readonly findings: ReadonlyArray<Finding>
  readonly anchors: ReadonlyArray<string> | null
}

/**
 * Follows a link through its redirects by hand and returns every problem met on the way.
 * Expected failures all become findings; only defects escape.
 */
export const followLink = (
  config: InspectorConfig,
  transport: Transport,
  uri: string,
  { background, readsAnchors, timeSpentMillis }: FollowOptions
): Effect.Effect<Followed> =>
  Effect.gen(function*() {
    const findings: Array<Finding> = []
    const visits = new Map<string, number>()
    // Origins whose certificate already failed in this chain: reported once, then fetched without verification.
    const originsWithBadCertificates = new Set<string>()
    const cookies = chainCookies()

    const checkTimeout = Duration.decode(config.checkTimeout)
    let networkMillisLeft = Duration.toMillis(checkTimeout) - timeSpentMillis
    let readsAnchorsAtEnd = readsAnchors
    const outOfTime = () =>
      new OutboundFailure({ reason: "responseTimeout", detail: `the check took longer than ${Duration.format(checkTimeout)}` })

    /** One request, within what is left of the check's time on the network. */
    const exchange = (url: URL, verifyCertificate: boolean): Effect.Effect<Exchange, OutboundFailure> =>
      Effect.gen(function*() {
        if (networkMillisLeft <= 0) return yield* outOfTime()
        const startedAt = yield* Clock.currentTimeMillis
        const answer = yield* transport.get(url, {
          cookie: cookies.headerFor(url),
          verifyCertificate,
          headLimit: ratingWindow,
          readAnchors: readsAnchorsAtEnd,
          deadline: { atMillis: startedAt + networkMillisLeft, outOfTime }
        }).pipe(
          Effect.ensuring(Effect.map(Clock.currentTimeMillis, (endedAt) => {
            networkMillisLeft -= endedAt - startedAt
          }))
        )
        return { ...answer, matureRating: answer.head !== null && hasMatureRating(answer.head) }
      })

    const exchangePatiently = (url: URL, verifyCertificate: boolean): Effect.Effect<Exchange, OutboundFailure> => {
      const attempt = (retry: number): Effect.Effect<Exchange, OutboundFailure> =>
        Effect.flatMap(exchange(url, verifyCertificate), (result) =>
          background && isRetriedInBackground(result.status) && retry <= config.retries.attempts
            ? Clock.currentTimeMillis.pipe(
              Effect.flatMap((now) => Effect.sleep(retryDelay(config.retries, retry, result.retryAfter, now))),
              Effect.zipRight(attempt(retry + 1))
            )
            : Effect.succeed(result))
      return attempt(1)
    }

    const fetch = (url: URL, shownAs: string | null): Effect.Effect<Exchange, OutboundFailure> =>
      originsWithBadCertificates.has(url.origin)
        ? exchangePatiently(url, false)
        : exchangePatiently(url, true).pipe(
          Effect.catchIf((failure) => failure.reason === "certificate", () => {
            originsWithBadCertificates.add(url.origin)
            findings.push(finding(Problem.SecurityProblem(), shownAs))
            return exchangePatiently(url, false)
          })
        )

    let stop: Stop = { input: uri, shownAs: null }
    let hops = 0
    let anchors: ReadonlyArray<string> | null = null
    while (true) {
      const assessment = assessUrl(stop.input, config)
      findings.push(...assessment.problems.map((problem) => finding(problem, stop.shownAs)))
      if (assessment._tag === "DoNotRequest") break
      const url = assessment.url

      if (!config.allowPrivateAddresses && isIpAddress(url.hostname) && !isPublicAddress(url.hostname)) {
        findings.push(finding(Problem.PrivateAddress(), stop.shownAs))
        break
      }
      const visitsOfUrl = (visits.get(url.href) ?? 0) + 1
      visits.set(url.href, visitsOfUrl)
      if (visitsOfUrl >= loopVisits) {
        findings.push(finding(Problem.BrokenRedirect({ reason: "loop" })))
        break
      }

      const fetched = yield* Effect.either(fetch(url, stop.shownAs))
      if (fetched._tag === "Left") {
        yield* Effect.logDebug("Link check request failed", fetched.left.detail)
        findings.push(finding(problemForFailure(fetched.left.reason), stop.shownAs))
        break
      }
      const response = fetched.right
      cookies.store(response.setCookies, url)

      if (response.location !== undefined && isFollowableRedirect(response.status, response.location)) {
        hops += 1
        if (hops >= config.maxRedirects) {
          findings.push(finding(Problem.BrokenRedirect({ reason: "tooManyHops" })))
          break
        }
        const next = resolveLocation(response.location, url)
        if (next === null) {
          findings.push(finding(Problem.InvalidUrl({ reason: "unparseable" }), response.location))
          break
        }
        // A browser then goes to the redirect's section, not the link's: no fragment of the link is judged.
        if (next.href.includes("#")) readsAnchorsAtEnd = false
        stop = { input: next.href, shownAs: displayUrl(next) }
        continue
      }

      const statusProblem = problemForStatus(response.status, response.cfMitigated)
      if (statusProblem !== null) findings.push(finding(statusProblem, stop.shownAs))
      if (response.matureRating) findings.push(finding(Problem.SuspiciousContent(), stop.shownAs))
      if (statusProblem === null) anchors = response.anchors
      if (hops >= 2) findings.push(finding(Problem.BadRedirect({ hops, finalUrl: displayUrl(url) })))
      const hasErrors = findings.some(({ problem }) => severityOf(problem) === "error")
      if (!hasErrors && response.slow) {
        const thresholdMillis = Duration.toMillis(config.slowThreshold)
        findings.push(finding(Problem.SlowPage({ thresholdMillis }), stop.shownAs))
      }
      break
    }
    return { findings, anchors }
  })
