import { annotateSpan, withSpanWhenTracing } from "@civicstack/kit"
import { Cause, Context, Duration, Effect, Exit, FiberId, FiberRef, Layer, LogLevel, Option, Runtime } from "effect"
import { assembleOutcome, checkFailedOutcome } from "../domain/outcome"
import type { CheckResult } from "../domain/check"
import type { InspectorConfig } from "../settings"
import { defaultInspectorConfig } from "./inspector/config"
import { LinkFollower } from "./inspector/followLink"
import type { Step } from "./inspector/followLink"
import { makeTransport } from "./inspector/transport"

export type { InspectorConfig } from "../settings"

const SPAN = "linkcheck.inspect"

/** The host only: a link's path and query may carry what its page's owner keeps private. */
const spanAttributes = (uri: string) => ({ "server.address": URL.canParse(uri) ? new URL(uri).hostname : "(invalid)" })

const makeInspector = (config: InspectorConfig) =>
  Effect.gen(function*() {
    const transport = yield* makeTransport({
      userAgent: config.userAgent,
      connectTimeout: config.connectTimeout,
      responseTimeout: config.responseTimeout,
      slowThreshold: config.slowThreshold,
      perHostConnections: config.perHostConnections,
      allowPrivateAddresses: config.allowPrivateAddresses,
      resolve: config.lookup
    })
    const clock = yield* Effect.clock
    // logs and the waits before retries run on the runtime the layer was built in, as the rest of the inspector's time
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())

    // read once: a check's debug log would otherwise cost a fiber even when nothing shows it
    const logsDebug = LogLevel.lessThanEqual(yield* FiberRef.get(FiberRef.currentMinimumLogLevel), LogLevel.Debug)

    const startUntraced: Start = (uri, options, whenDone) => {
      let cancel = () => {}
      let finished = false
      const done = (inspection: Inspection) => {
        if (finished) return
        finished = true
        whenDone(inspection)
      }
      const couldNotComplete = (defect: unknown) => {
        runFork(Effect.logError("Link check could not be completed", Cause.die(defect)))
        done({ result: checkFailedOutcome, anchors: null })
      }
      try {
        const follower = new LinkFollower(config, transport, clock, uri, {
          background: options.background,
          timeSpentMillis: Duration.toMillis(options.timeSpent ?? 0),
          readsAnchors: options.readsAnchors ?? false
        })
        const goOn = () => {
          cancel = follower.goOn(onStep)
        }
        const onStep = (step: Step) => {
          switch (step._tag) {
            case "Done": {
              if (logsDebug && follower.failureDetail !== undefined) {
                runFork(Effect.logDebug("Link check request failed", follower.failureDetail))
              }
              return done({ result: assembleOutcome(step.followed.findings), anchors: step.followed.anchors })
            }
            case "Wait": {
              const waiting = runFork(Effect.sleep(step.millis))
              cancel = () => waiting.unsafeInterruptAsFork(FiberId.none)
              return waiting.addObserver((exit) => Exit.isSuccess(exit) && goOn())
            }
            case "Defect":
              return couldNotComplete(step.defect)
          }
        }
        goOn()
      } catch (defect) {
        couldNotComplete(defect)
      }
      return () => cancel()
    }

    const tracer = (yield* FiberRef.get(FiberRef.currentTracerEnabled)) ? yield* Effect.tracer : null
    /** A check started outside any effect (the scheduler's) is a trace of its own, when spans are recorded. */
    const start: Start = tracer === null ? startUntraced : (uri, options, done) => {
      const span = tracer.span(SPAN, Option.none(), Context.empty(), [], clock.unsafeCurrentTimeNanos(), "internal")
      for (const [key, value] of Object.entries(spanAttributes(uri))) span.attribute(key, value)
      const cancel = startUntraced(uri, options, (inspection) => {
        span.attribute("linkcheck.status", inspection.result.status)
        span.end(clock.unsafeCurrentTimeNanos(), Exit.void)
        done(inspection)
      })
      return () => {
        cancel()
        span.end(clock.unsafeCurrentTimeNanos(), Exit.interrupt(FiberId.none))
      }
    }

    const inspect = (uri: string, options: InspectOptions): Effect.Effect<Inspection> =>
      Effect.async<Inspection>((resume) => {
        const cancel = startUntraced(uri, options, (inspection) => resume(Effect.succeed(inspection)))
        return Effect.sync(cancel)
      }).pipe(
        Effect.tap(({ result }) => annotateSpan("linkcheck.status", result.status)),
        withSpanWhenTracing(SPAN, { attributes: () => spanAttributes(uri) })
      )
    // decoded when asked, as the follower does, so that a bad setting is a defect of the check and not of the service
    return { start, inspect, checkTimeout: Effect.sync(() => Duration.decode(config.checkTimeout)) }
  })

export interface InspectOptions {
  /** Enables the 429/503 retries. */
  readonly background: boolean
  /** Time the check already spent waiting (for a slot of its site) that counts against its deadline. */
  readonly timeSpent?: Duration.DurationInput | undefined
  /** Read the anchors of the page the link ends on (for links into its sections). */
  readonly readsAnchors?: boolean | undefined
}

/** What a check records: its result, and the anchors of its page when they were asked for and could be read. */
export interface Inspection {
  readonly result: CheckResult
  readonly anchors: ReadonlyArray<string> | null
}

/**
 * Starts inspecting one link; `done` is called once, unless the returned function is called first, which drops the
 * check. Never fails: an internal failure becomes the warning that the check could not be completed.
 */
export type Start = (uri: string, options: InspectOptions, done: (inspection: Inspection) => void) => () => void

/**
 * Inspects one link for the service: URL rules, then a GET that follows redirects by hand, over pooled keep-alive
 * connections; the result is what a check records.
 */
export class LinkInspector extends Context.Tag("@civicstack/core-linkcheck/LinkInspector")<LinkInspector, {
  /** Never fails: an internal failure becomes the warning that the check could not be completed. */
  readonly inspect: (uri: string, options: InspectOptions) => Effect.Effect<Inspection>
  /**
   * `inspect` without a fiber, for the scheduler's thousands of checks at once, for which a fiber and the effect's
   * steps cost more than the check's own work. With tracing on, each such check is a trace of its own.
   */
  readonly start: Start
  /** The deadline of a check on the network (`InspectorConfig.checkTimeout`). */
  readonly checkTimeout: Effect.Effect<Duration.Duration>
}>() {
  /** Scoped: the connection pools are closed when the layer's scope closes. */
  static readonly layer = (config: Partial<InspectorConfig> = {}): Layer.Layer<LinkInspector> =>
    Layer.scoped(LinkInspector, makeInspector({ ...defaultInspectorConfig, ...config }))
}
