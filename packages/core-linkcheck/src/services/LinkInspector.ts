import { annotateSpan, withSpanWhenTracing } from "@civicstack/kit"
import { Cause, Context, Duration, Effect, Layer } from "effect"
import { assembleOutcome, checkFailedOutcome } from "../domain/outcome"
import type { CheckResult } from "../domain/check"
import type { InspectorConfig } from "../settings"
import { defaultInspectorConfig } from "./inspector/config"
import { followLink } from "./inspector/followLink"
import { makeTransport } from "./inspector/transport"

export type { InspectorConfig } from "../settings"

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
    const inspect = (uri: string, options: InspectOptions): Effect.Effect<Inspection> =>
      Effect.suspend(() =>
        followLink(config, transport, uri, {
          background: options.background,
          timeSpentMillis: Duration.toMillis(options.timeSpent ?? 0),
          readsAnchors: options.readsAnchors ?? false
        })
      ).pipe(
        Effect.map(({ anchors, findings }): Inspection => ({ result: assembleOutcome(findings), anchors })),
        Effect.catchAllDefect((defect) =>
          Effect.logError("Link check could not be completed", Cause.die(defect)).pipe(
            Effect.as<Inspection>({ result: checkFailedOutcome, anchors: null })
          )
        ),
        Effect.tap(({ result }) => annotateSpan("linkcheck.status", result.status)),
        // the host only: a link's path and query may carry what its page's owner keeps private
        withSpanWhenTracing("linkcheck.inspect", {
          attributes: () => ({ "server.address": URL.canParse(uri) ? new URL(uri).hostname : "(invalid)" })
        })
      )
    // decoded when asked, as followLink does, so that a bad setting is a defect of the check and not of the service
    return { inspect, checkTimeout: Effect.sync(() => Duration.decode(config.checkTimeout)) }
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
 * Inspects one link for the service: URL rules, then a GET that follows redirects by hand, over pooled keep-alive
 * connections; the result is what a check records.
 */
export class LinkInspector extends Context.Tag("@civicstack/core-linkcheck/LinkInspector")<LinkInspector, {
  /** Never fails: an internal failure becomes the warning that the check could not be completed. */
  readonly inspect: (uri: string, options: InspectOptions) => Effect.Effect<Inspection>
  /** The deadline of a check on the network (`InspectorConfig.checkTimeout`). */
  readonly checkTimeout: Effect.Effect<Duration.Duration>
}>() {
  /** Scoped: the connection pools are closed when the layer's scope closes. */
  static readonly layer = (config: Partial<InspectorConfig> = {}): Layer.Layer<LinkInspector> =>
    Layer.scoped(LinkInspector, makeInspector({ ...defaultInspectorConfig, ...config }))
}
