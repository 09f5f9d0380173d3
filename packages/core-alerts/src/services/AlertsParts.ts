import type { JobQueue } from "@civicstack/jobs"
import type { CoreParts } from "@civicstack/kit"
import { Context } from "effect"
import type { AlertsSettings } from "../settings"
import type { AlertsStore } from "../storage/AlertsStore"
import type { EmailStore } from "../storage/EmailStore"
import type { DeliveryPause } from "./DeliveryPause"
import type { EmailQueue } from "./EmailQueue"

/**
 * The internal parts of one email alert service, built once by `layerSql` or `layerMemory` and shared by its request
 * side (`Alerts`) and its workers. Not exported: embedders assemble the service from those layers.
 */
export class AlertsParts extends Context.Tag("@civicstack/core-alerts/AlertsParts")<AlertsParts, CoreParts<AlertsSettings, AlertsStore, JobQueue> & {
  readonly emails: Context.Tag.Service<EmailQueue>
  readonly emailStore: Context.Tag.Service<EmailStore>
  /** Whether delivery has stopped because the provider refuses the service as a sender: kept by the worker, shown by health. */
  readonly deliveryPause: Context.Tag.Service<DeliveryPause>
}>() {}
