import { makeAgent as makeGuardedAgent, OutboundFailure, toOutboundFailure } from "@civicstack/outbound"
import type { Resolver } from "@civicstack/outbound"
import { Duration, Effect, Either } from "effect"
import type { Scope } from "effect"
import type { Dispatcher } from "undici"
import { type Alarms, makeAlarms } from "./alarms"
import { AnchorCollector } from "./anchors"

export interface TransportSettings {
  readonly userAgent: string
  readonly connectTimeout: Duration.DurationInput
  readonly responseTimeout: Duration.DurationInput
  readonly slowThreshold: Duration.DurationInput
  readonly perHostConnections: number
  readonly allowPrivateAddresses: boolean
  readonly resolve?: Resolver | undefined
}

/** What a check needs from one response. */
export interface Answer {
  readonly status: number
  readonly location: string | undefined
  readonly setCookies: ReadonlyArray<string>
  readonly cfMitigated: string | undefined
  readonly retryAfter: string | undefined
  /**
   * The HTML head as Latin-1 text, when `headLimit` asked for it: the body up to `</head`, at most that many bytes
   * (less if the body failed or stalled); null when not asked for.
   */
  readonly head: string | null
  /**
   * The page's anchors, when `readAnchors` asked for them of a body that `headLimit` reads: the body is then read up
   * to `</body>` or its end; null when not asked for, or when the body was larger than `anchorsWindowBytes`, failed,
   * stalled, or had too many anchors.
   */
  readonly anchors: ReadonlyArray<string> | null
  /** The response headers came later than the slow threshold after the request was sent. */
  readonly slow: boolean
}

export interface GetOptions {
  readonly cookie: string | undefined
  readonly verifyCertificate: boolean
  /** How many bytes of the body to search for the end of the HTML head, given the status and content type; 0 for none. */
  readonly headLimit: (status: number, contentType: string | undefined) => number
  /** Read on, past the head, for the anchors of a body whose head is read. */
  readonly readAnchors: boolean
  /** When the check's time is up, on Effect's Clock: the request is then dropped and fails with `outOfTime()`. */
  readonly deadline: { readonly atMillis: number; readonly outOfTime: () => OutboundFailure }
}

export interface Transport {
  /**
   * Starts one GET, redirects not followed; the body is read no further than `headLimit` asks and then dropped.
   * `done` is called once, unless the returned function is called first, which drops the request. A callback, not an
   * effect: a check makes one request or a few, and each step of an effect costs more than the request's own code.
   */
  readonly start: (url: URL, options: GetOptions, done: (outcome: Either.Either<Answer, OutboundFailure>) => void) => () => void
}

/** A body this short after the part that was read is let through, so its connection can be reused; a longer one is cut off. */
const bytesKeptForConnectionReuse = 64 * 1024

/** A page read for its anchors is read no further than this: the response size limit of the outbound client. */
const anchorsWindowBytes = 1024 * 1024

/**
 * How long the rest of a body may take to arrive once the check has its answer, counted once and never restarted:
 * a page that drips its body must not keep its connection, and with it one of its site's few, for longer.
 */
const letThroughMillis = 1000

/** Where the head of an HTML page ends, in either common spelling, from `from` on; -1 when not there. */
const endOfHead = (bytes: Buffer, from: number): number => {
  const lower = bytes.indexOf("</head", from)
  return lower !== -1 ? lower : bytes.indexOf("</HEAD", from)
}

/**
 * A deadline that, once its time has passed, lets pending I/O have one turn of the event loop (`setImmediate`)
 * before it calls `expire`. A busy event loop runs late timers before it reads the sockets that became readable
 * meanwhile, so without that turn a response already received would lose to its own deadline. undici's connect
 * timeout waits for the same reason.
 */
class Deadline {
  private timer: ReturnType<typeof setTimeout> | undefined
  private immediate: ReturnType<typeof setImmediate> | undefined
  constructor(millis: number, private readonly expire: () => void) {
    this.timer = setTimeout(this.fire, millis)
  }
  private readonly fire = () => {
    this.timer = undefined
    this.immediate = setImmediate(this.expire)
  }
  cancel(): void {
    if (this.timer !== undefined) clearTimeout(this.timer)
    if (this.immediate !== undefined) clearImmediate(this.immediate)
    this.timer = undefined
    this.immediate = undefined
  }
}

const headerNameIs = (name: Buffer | string, lowerCase: string): boolean => {
  const text = typeof name === "string" ? name : name.toString("latin1")
  return text.length === lowerCase.length && text.toLowerCase() === lowerCase
}

/** Header values as undici gives them to its own callers. */
const valueOf = (value: Buffer | string): string => (typeof value === "string" ? value : value.toString("utf8"))

interface ExchangeSettings {
  readonly responseTimeoutMillis: number
  readonly slowThresholdMillis: number
}

/**
 * One request's undici handler: it keeps only the few headers a check uses, reads the body only as far as asked,
 * lets a short rest through for connection reuse (else cuts the connection), and decides the response timeout and
 * the slow threshold on the time the response headers were read, not on when the check's fiber ran again.
 */
class Exchange implements Dispatcher.DispatchHandlers {
  private abortRequest: ((reason: Error) => void) | undefined
  private abortReason: Error | undefined
  /** Set once the check has its answer (or failure); the rest of the body is then only let through or cut off. */
  private settled = false
  private headersSeen = false
  private slow = false
  private readonly slowDeadline: Deadline
  private readonly disarmCheckDeadline: () => void
  private responseDeadline: Deadline | undefined
  private bodyDeadline: Deadline | undefined
  private headLimit = 0
  private received: Buffer | undefined
  /** The head once read (the part of `received` it needs); the body is then read on only for anchors. */
  private head: string | undefined
  private collector: AnchorCollector | undefined
  private anchors: ReadonlyArray<string> | null = null
  private bodyBytesRead = 0
  private contentLength: number | undefined
  private bodyBytesLeftToLetThrough = bytesKeptForConnectionReuse
  private answer: Omit<Answer, "head" | "anchors" | "slow"> | undefined

  constructor(
    private readonly settings: ExchangeSettings,
    private readonly options: GetOptions,
    private readonly done: (outcome: Either.Either<Answer, OutboundFailure>) => void,
    alarms: Alarms
  ) {
    this.slowDeadline = new Deadline(settings.slowThresholdMillis, () => {
      if (!this.headersSeen) this.slow = true
    })
    this.disarmCheckDeadline = alarms.set(options.deadline.atMillis, () => {
      const failure = options.deadline.outOfTime()
      this.fail(failure)
      this.abort(failure)
    })
  }

  /** The check no longer waits (it was interrupted): the request is dropped with its connection. */
  cancel(): void {
    this.settled = true
    this.stopTimers()
    this.abort(new OutboundFailure({ reason: "other", detail: "the check was interrupted" }))
  }

  private abort(reason: Error): void {
    if (this.abortRequest !== undefined) this.abortRequest(reason)
    else this.abortReason = reason
  }

  private stopTimers(): void {
    this.disarmCheckDeadline()
    this.slowDeadline.cancel()
    this.responseDeadline?.cancel()
    this.bodyDeadline?.cancel()
  }

  private settle(head: string | null): void {
    this.settled = true
    this.disarmCheckDeadline()
    this.done(Either.right({ ...this.answer!, head, anchors: this.anchors, slow: this.slow }))
  }

  private fail(failure: OutboundFailure): void {
    if (this.settled) return
    this.settled = true
    this.stopTimers()
    this.done(Either.left(failure))
  }

  /** Called when the request is about to be written, its connection open. */
  onConnect(abort: (reason?: Error) => void): void {
    if (this.abortReason !== undefined) return abort(this.abortReason)
    this.abortRequest = abort
    this.responseDeadline = new Deadline(this.settings.responseTimeoutMillis, () => {
      if (this.headersSeen) return
      const failure = new OutboundFailure({
        reason: "responseTimeout",
        detail: `no response headers within ${this.settings.responseTimeoutMillis} ms`
      })
      this.fail(failure)
      abort(failure)
    })
  }

  onHeaders(
    statusCode: number,
    rawHeaders: Array<Buffer> | Array<string> | null,
    _resume: () => void,
    _statusText: string
  ): boolean {
    if (statusCode < 200) return true
    this.headersSeen = true
    this.slowDeadline.cancel()
    this.responseDeadline?.cancel()
    let location: string | undefined
    let cfMitigated: string | undefined
    let retryAfter: string | undefined
    let contentType: string | undefined
    let contentLength: number | undefined
    const setCookies: Array<string> = []
    const headers = rawHeaders ?? []
    for (let index = 0; index + 1 < headers.length; index += 2) {
      const name = headers[index]!
      // most headers are told apart by their length alone; a value is decoded only when its name is wanted
      switch (name.length) {
        case 8:
          if (location === undefined && headerNameIs(name, "location")) location = valueOf(headers[index + 1]!)
          break
        case 10:
          if (headerNameIs(name, "set-cookie")) setCookies.push(valueOf(headers[index + 1]!))
          break
        case 11:
          if (retryAfter === undefined && headerNameIs(name, "retry-after")) retryAfter = valueOf(headers[index + 1]!)
          break
        case 12:
          if (contentType === undefined && headerNameIs(name, "content-type")) contentType = valueOf(headers[index + 1]!)
          else if (cfMitigated === undefined && headerNameIs(name, "cf-mitigated")) {
            cfMitigated = valueOf(headers[index + 1]!)
          }
          break
        case 14:
          if (contentLength === undefined && headerNameIs(name, "content-length")) {
            contentLength = Number(valueOf(headers[index + 1]!))
          }
          break
      }
    }
    if (this.settled) return true
    this.answer = { status: statusCode, location, setCookies, cfMitigated, retryAfter }
    this.headLimit = this.options.headLimit(statusCode, contentType)
    this.contentLength = contentLength
    // a body longer than what reuse is worth is cut off as soon as the check has what it needs
    if (contentLength !== undefined && contentLength > bytesKeptForConnectionReuse) {
      this.bodyBytesLeftToLetThrough = 0
    }
    if (this.headLimit === 0) {
      this.settle(null)
      this.startLettingThrough()
      return true
    }
    if (this.options.readAnchors) this.collector = new AnchorCollector(contentType)
    this.bodyDeadline = new Deadline(this.settings.responseTimeoutMillis, () => this.stopReading(this.headLimit, false))
    return true
  }

  onData(chunk: Buffer): boolean {
    if (this.settled) {
      this.bodyBytesLeftToLetThrough -= chunk.length
      if (this.bodyBytesLeftToLetThrough < 0) this.cutOff()
      return true
    }
    const collector = this.collector
    if (collector !== undefined) {
      this.bodyBytesRead += chunk.length
      collector.write(chunk)
    }
    if (this.head === undefined) this.searchHead(chunk)
    if (this.settled || collector === undefined) return true
    if (collector.done) this.anchorsRead()
    else if (this.bodyBytesRead >= anchorsWindowBytes) this.stopReading(this.headLimit, false)
    return true
  }

  private searchHead(chunk: Buffer): void {
    const previous = this.received
    const searchFrom = previous === undefined ? 0 : Math.max(0, previous.length - "</head".length + 1)
    const received = previous === undefined ? chunk : Buffer.concat([previous, chunk])
    this.received = received
    const headEnd = endOfHead(received, searchFrom)
    if (headEnd !== -1 && headEnd <= this.headLimit) this.headRead(headEnd, true)
    else if (received.length >= this.headLimit) this.headRead(this.headLimit, false)
  }

  /** Without anchors to read the check has its answer; with them, the head is kept and the body read on. */
  private headRead(length: number, headEnded: boolean): void {
    if (this.collector === undefined) return this.stopReading(length, headEnded)
    this.keepHead(length)
  }

  /** `</body>` was read: the check has its answer, and the short rest of most pages is let through for reuse. */
  private anchorsRead(): void {
    this.anchors = this.collector!.finish()
    this.settleWithHead(this.headLimit)
    const rest = this.contentLength === undefined ? 0 : this.contentLength - this.bodyBytesRead
    if (rest > bytesKeptForConnectionReuse) return this.cutOff()
    this.bodyBytesLeftToLetThrough = bytesKeptForConnectionReuse
    this.startLettingThrough()
  }

  onComplete(_trailers: Array<Buffer> | Array<string> | null): void {
    this.stopTimers()
    if (this.settled) return
    if (this.collector !== undefined) this.anchors = this.collector.finish()
    this.settleWithHead(this.received?.length ?? 0)
  }

  onError(error: Error): void {
    this.stopTimers()
    if (this.settled) return
    // what arrived of the head before a failure is still worth searching
    if (this.answer !== undefined) return this.settleWithHead(this.headLimit)
    this.fail(toOutboundFailure(error))
  }

  onUpgrade(): void {}

  private keepHead(length: number): void {
    const received = this.received
    this.received = undefined
    this.head = received === undefined ? "" : received.toString("latin1", 0, Math.min(length, received.length))
  }

  private settleWithHead(length: number): void {
    if (this.head === undefined) this.keepHead(length)
    this.settle(this.head!)
  }

  /** The head has been read (or all that will be): the check has its answer; the rest is let through or cut off. */
  private stopReading(length: number, headEnded: boolean): void {
    const bytesAfterHead = (this.received?.length ?? 0) - length
    this.settleWithHead(length)
    if (!headEnded) return this.cutOff()
    this.bodyBytesLeftToLetThrough -= Math.max(0, bytesAfterHead)
    if (this.bodyBytesLeftToLetThrough < 0) return this.cutOff()
    this.startLettingThrough()
  }

  private startLettingThrough(): void {
    if (this.bodyBytesLeftToLetThrough <= 0) return this.cutOff()
    this.bodyDeadline?.cancel()
    this.bodyDeadline = new Deadline(Math.min(letThroughMillis, this.settings.responseTimeoutMillis), () => this.cutOff())
  }

  private cutOff(): void {
    this.stopTimers()
    this.abortRequest?.(new OutboundFailure({ reason: "other", detail: "the rest of the body was not needed" }))
  }
}

export const makeTransport = (settings: TransportSettings): Effect.Effect<Transport, never, Scope.Scope> =>
  Effect.gen(function*() {
    const makeAgent = (verifyCertificate: boolean) =>
      makeGuardedAgent({
        allowPrivateAddresses: settings.allowPrivateAddresses,
        resolve: settings.resolve,
        connectTimeout: settings.connectTimeout,
        responseTimeout: settings.responseTimeout,
        connectionsPerOrigin: settings.perHostConnections,
        verifyCertificates: verifyCertificate
      })
    const alarms = yield* makeAlarms
    const verifying = yield* makeAgent(true)
    // Only used again after a certificate failure, to see what the page would show past the browser's warning.
    const notVerifying = yield* makeAgent(false)

    const start: Transport["start"] = (url, options, done) => {
      // decoded for each request, so that a bad setting is a defect of the check (thrown here) and not of the service
      const exchangeSettings: ExchangeSettings = {
        responseTimeoutMillis: Duration.toMillis(settings.responseTimeout),
        slowThresholdMillis: Duration.toMillis(settings.slowThreshold)
      }
      const headers = options.cookie === undefined
        ? ["user-agent", settings.userAgent, "accept", "text/html,*/*"]
        : ["user-agent", settings.userAgent, "accept", "text/html,*/*", "cookie", options.cookie]
      const exchange = new Exchange(exchangeSettings, options, done, alarms)
      try {
        ;(options.verifyCertificate ? verifying : notVerifying).dispatch({
          origin: url.origin,
          path: url.search === "" ? url.pathname : `${url.pathname}${url.search}`,
          method: "GET",
          headers,
          // the exchange keeps these deadlines itself, giving a busy event loop its turn of I/O first
          headersTimeout: 0,
          bodyTimeout: 0
        }, exchange)
      } catch (error) {
        exchange.onError(error as Error)
      }
      return () => exchange.cancel()
    }

    return { start }
  })
