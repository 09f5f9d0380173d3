import { JobQueue } from "@civicstack/jobs"
import type { CoreParts } from "@civicstack/kit"
import { Context, Effect, Layer } from "effect"
import type { LinkcheckSettings } from "../settings"
import { LinkcheckStore } from "../storage/LinkcheckStore"
import { CheckSignal } from "./CheckSignal"
import { CheckSlots } from "./CheckSlots"
import { makeCompletion } from "./completion"
import type { Completion } from "./completion"
import { LinkInspector } from "./LinkInspector"
import { LocalClaims } from "./LocalClaims"
import { WebhookTransport } from "./WebhookTransport"

const USER_AGENT_PRODUCT = "civicstack-linkcheck/0.1"

/**
 * The internal parts of one link checking service, built once by `layerSql` or `layerMemory` and shared by its
 * request side (`LinkChecker`) and its `workers`. Not exported: embedders assemble the service from those layers.
 */
export class LinkcheckParts extends Context.Tag("@civicstack/core-linkcheck/LinkcheckParts")<LinkcheckParts, CoreParts<LinkcheckSettings, LinkcheckStore, JobQueue> & {
  readonly inspector: Context.Tag.Service<LinkInspector>
  readonly signal: Context.Tag.Service<CheckSignal>
  readonly localClaims: Context.Tag.Service<LocalClaims>
  readonly slots: Context.Tag.Service<CheckSlots>
  readonly completion: Completion
  readonly webhookTransport: Context.Tag.Service<WebhookTransport>
}>() {
  /**
   * The parts over the store and job queue the caller provides: inspector, signal, check slots, local claims and
   * webhook transport inside.
   */
  static readonly layer = (settings: LinkcheckSettings): Layer.Layer<LinkcheckParts, never, LinkcheckStore | JobQueue> =>
    Layer.effect(
      LinkcheckParts,
      Effect.gen(function*() {
        const store = yield* LinkcheckStore
        const jobs = yield* JobQueue
        return {
          settings,
          store,
          jobs,
          inspector: yield* LinkInspector,
          signal: yield* CheckSignal,
          localClaims: yield* LocalClaims,
          slots: yield* CheckSlots,
          webhookTransport: yield* WebhookTransport,
          completion: makeCompletion(store, jobs)
        }
      })
    ).pipe(
      Layer.provide(Layer.mergeAll(
        LinkInspector.layer({
          ...settings.inspector,
          allowPrivateAddresses: settings.allowPrivateAddresses,
          suspiciousDomains: settings.suspiciousDomains,
          internalDomains: settings.internalDomains,
          perHostConnections: settings.perHostConcurrency,
          ...(settings.resolver === undefined ? {} : { lookup: settings.resolver })
        }),
        CheckSlots.layer({ concurrency: settings.concurrency, perSite: settings.perHostConcurrency }).pipe(
          Layer.provideMerge(CheckSignal.layer)
        ),
        LocalClaims.layer,
        WebhookTransport.layer({
          allowPrivateAddresses: settings.allowPrivateAddresses,
          userAgent: USER_AGENT_PRODUCT,
          ...(settings.resolver === undefined ? {} : { lookup: settings.resolver })
        })
      ))
    )
}
