import type { JobQueue } from "@civicstack/jobs"
import { Context } from "effect"
import type { LinkcheckSettings } from "../settings"
import type { LinkcheckStore } from "../storage/LinkcheckStore"
import type { LinkInspector } from "./LinkInspector"
import type { CheckSignal } from "./CheckSignal"
import type { Completion } from "./completion"
import type { WebhookTransport } from "./webhookTransport"

/**
 * The internal parts of one link checking service, built once by `layerSql` or `layerMemory` and shared by its
 * request side (`LinkChecker`) and its `workers`. Not exported: embedders assemble the service from those layers.
 */
export class LinkcheckParts extends Context.Tag("@civicstack/core-linkcheck/LinkcheckParts")<LinkcheckParts, {
  readonly settings: LinkcheckSettings
  readonly store: Context.Tag.Service<LinkcheckStore>
  readonly jobs: Context.Tag.Service<JobQueue>
  readonly inspector: Context.Tag.Service<LinkInspector>
  readonly signal: Context.Tag.Service<CheckSignal>
  readonly completion: Completion
  readonly webhookTransport: Context.Tag.Service<WebhookTransport>
}>() {}
