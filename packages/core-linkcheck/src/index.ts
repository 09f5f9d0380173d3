export * from "./api/index"
export type { BatchRecord, CheckPriority, CheckRecord, CheckResult, ClaimedCheck, Webhook } from "./domain/check"
export { signWebhookBody, SIGNATURE_HEADER } from "./domain/signature"
export { linkcheckHandlers } from "./http/handlers"
export { migrate } from "./migrations/index"
export { Checker, defaultCheckerConfig } from "./services/Checker"
export type { CheckerConfig, CheckOutcome } from "./services/Checker"
export { defaultSchedulerOptions, runScheduler } from "./services/CheckScheduler"
export type { SchedulerOptions } from "./services/CheckScheduler"
export { CheckSignal } from "./services/CheckSignal"
export { CleanupOldChecks, cleanupSchedule, DEFAULT_RETENTION, deleteOldChecks, runCleanupWorker } from "./services/cleanup"
export { LinkChecker, linkCheckerLayer } from "./services/LinkChecker"
export type { CreatedBatch } from "./services/LinkChecker"
export { WebhookDelivery } from "./services/webhookJob"
export {
  deliverWebhook,
  runWebhookWorker,
  WebhookNotDelivered,
  WebhookTransport,
  WebhookTransportError
} from "./services/WebhookSender"
export { webhookTransportLayer } from "./services/webhookTransport"
export type { WebhookTransportConfig } from "./services/webhookTransport"
export { LinkcheckStore, StoreError } from "./storage/LinkcheckStore"
export { layerMemory as storeLayerMemory } from "./storage/memory"
export { layerSql as storeLayerSql } from "./storage/sql"
