import { isIpAddress, isPublicAddress, OutboundFailure } from "@civicstack/outbound"
import type { OutboundFailureReason } from "@civicstack/outbound"
import { Duration } from "effect"
import type { Clock, Either } from "effect"
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
import type { Answer, Transport } from "./transport"

/** The rating check reads no more of an HTML page than this. */
const ratingWindowBytes = 64 * 1024

/** Only an HTML page that answered 200 is read, for its rating. */
const ratingWindow = (status: number, contentType: string | undefined): number =>
  status === 200 && isHtml(contentType) ? ratingWindowBytes : 0

/** The same URL this many times in one chain is a redirect loop. */
const loopVisits = 5

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

/** Where a check stands when it hands back to its fiber: done, or waiting to retry a 429 or 503 on Effect's clock. */
export type Step =
  | { readonly _tag: "Done"; readonly followed: Followed }
  | { readonly _tag: "Wait"; readonly millis: number }
  | { readonly _tag: "Defect"; readonly defect: unknown }

/**
 * One check's walk along a link and its redirects, driven by the transport's callbacks: from a fiber's point of view
 * a check is then one wait, or a few when it retries, rather than an effect's many steps for each request.
 */
export class LinkFollower {
  private readonly findings: Array<Finding> = []
  private readonly visits = new Map<string, number>()
  /** Origins whose certificate already failed in this chain: reported once, then fetched without verification. */
  private readonly originsWithBadCertificates = new Set<string>()
  private readonly cookies = chainCookies()
  private readonly checkTimeout: Duration.Duration
  private networkMillisLeft: number
  private readsAnchorsAtEnd: boolean
  private stop: Stop
  private hops = 0
  /** The request to make again once the wait for a retry is over. */
  private retrying: { readonly url: URL; readonly verifyCertificate: boolean; readonly retry: number } | undefined
  private cancelRequest: (() => void) | undefined
  private handBack: (step: Step) => void = () => {}
  /** Why the last request failed, for the debug log. */
  failureDetail: string | undefined

  constructor(
    private readonly config: InspectorConfig,
    private readonly transport: Transport,
    private readonly clock: Clock.Clock,
    uri: string,
    private readonly options: FollowOptions
  ) {
    this.checkTimeout = Duration.decode(config.checkTimeout)
    this.networkMillisLeft = Duration.toMillis(this.checkTimeout) - options.timeSpentMillis
    this.readsAnchorsAtEnd = options.readsAnchors
    this.stop = { input: uri, shownAs: null }
  }

  /** Goes on until the check is done or waits; `handBack` is called once. The returned function drops the request. */
  goOn(handBack: (step: Step) => void): () => void {
    this.handBack = handBack
    const retrying = this.retrying
    this.retrying = undefined
    this.guarded(() =>
      retrying === undefined
        ? this.visitStop()
        : this.request(retrying.url, retrying.verifyCertificate, retrying.retry)
    )
    return () => this.cancelRequest?.()
  }

  private guarded(step: () => void): void {
    try {
      step()
    } catch (defect) {
      this.cancelRequest?.()
      this.handBack({ _tag: "Defect", defect })
    }
  }

  private done(anchors: ReadonlyArray<string> | null = null): void {
    this.handBack({ _tag: "Done", followed: { findings: this.findings, anchors } })
  }

  private report(problem: Problem, shownAs: string | null = this.stop.shownAs): void {
    this.findings.push(finding(problem, shownAs))
  }

  private visitStop(): void {
    const stop = this.stop
    const assessment = assessUrl(stop.input, this.config)
    for (const problem of assessment.problems) this.report(problem)
    if (assessment._tag === "DoNotRequest") return this.done()
    const url = assessment.url

    if (!this.config.allowPrivateAddresses && isIpAddress(url.hostname) && !isPublicAddress(url.hostname)) {
      this.report(Problem.PrivateAddress())
      return this.done()
    }
    const visitsOfUrl = (this.visits.get(url.href) ?? 0) + 1
    this.visits.set(url.href, visitsOfUrl)
    if (visitsOfUrl >= loopVisits) {
      this.report(Problem.BrokenRedirect({ reason: "loop" }), null)
      return this.done()
    }
    this.request(url, !this.originsWithBadCertificates.has(url.origin), 1)
  }

  /** One request, within what is left of the check's time on the network. */
  private request(url: URL, verifyCertificate: boolean, retry: number): void {
    if (this.networkMillisLeft <= 0) return this.failed(url, verifyCertificate, this.outOfTime())
    const startedAt = this.clock.unsafeCurrentTimeMillis()
    let answered = false
    const cancel = this.transport.start(url, {
      cookie: this.cookies.headerFor(url),
      verifyCertificate,
      headLimit: ratingWindow,
      readAnchors: this.readsAnchorsAtEnd,
      deadline: { atMillis: startedAt + this.networkMillisLeft, outOfTime: () => this.outOfTime() }
    }, (outcome: Either.Either<Answer, OutboundFailure>) => {
      answered = true
      this.cancelRequest = undefined
      this.networkMillisLeft -= this.clock.unsafeCurrentTimeMillis() - startedAt
      this.guarded(() =>
        outcome._tag === "Right"
          ? this.answered(url, verifyCertificate, retry, outcome.right)
          : this.failed(url, verifyCertificate, outcome.left)
      )
    })
    if (!answered) this.cancelRequest = cancel
  }

  private outOfTime(): OutboundFailure {
    return new OutboundFailure({
      reason: "responseTimeout",
      detail: `the check took longer than ${Duration.format(this.checkTimeout)}`
    })
  }

  private failed(url: URL, verifyCertificate: boolean, failure: OutboundFailure): void {
    if (failure.reason === "certificate" && verifyCertificate) {
      this.originsWithBadCertificates.add(url.origin)
      this.report(Problem.SecurityProblem())
      return this.request(url, false, 1)
    }
    this.failureDetail = failure.detail
    this.report(problemForFailure(failure.reason))
    this.done()
  }

  private answered(url: URL, verifyCertificate: boolean, retry: number, response: Answer): void {
    const { config } = this
    if (this.options.background && isRetriedInBackground(response.status) && retry <= config.retries.attempts) {
      this.retrying = { url, verifyCertificate, retry: retry + 1 }
      const wait = retryDelay(config.retries, retry, response.retryAfter, this.clock.unsafeCurrentTimeMillis())
      return this.handBack({ _tag: "Wait", millis: Duration.toMillis(wait) })
    }
    this.cookies.store(response.setCookies, url)

    if (response.location !== undefined && isFollowableRedirect(response.status, response.location)) {
      this.hops += 1
      if (this.hops >= config.maxRedirects) {
        this.report(Problem.BrokenRedirect({ reason: "tooManyHops" }), null)
        return this.done()
      }
      const next = resolveLocation(response.location, url)
      if (next === null) {
        this.report(Problem.InvalidUrl({ reason: "unparseable" }), response.location)
        return this.done()
      }
      // A browser then goes to the redirect's section, not the link's: no fragment of the link is judged.
      if (next.href.includes("#")) this.readsAnchorsAtEnd = false
      this.stop = { input: next.href, shownAs: displayUrl(next) }
      return this.visitStop()
    }

    const statusProblem = problemForStatus(response.status, response.cfMitigated)
    if (statusProblem !== null) this.report(statusProblem)
    if (response.head !== null && hasMatureRating(response.head)) this.report(Problem.SuspiciousContent())
    if (this.hops >= 2) this.report(Problem.BadRedirect({ hops: this.hops, finalUrl: displayUrl(url) }), null)
    const hasErrors = this.findings.some(({ problem }) => severityOf(problem) === "error")
    if (!hasErrors && response.slow) this.report(Problem.SlowPage({ thresholdMillis: Duration.toMillis(config.slowThreshold) }))
    this.done(statusProblem === null ? response.anchors : null)
  }
}
