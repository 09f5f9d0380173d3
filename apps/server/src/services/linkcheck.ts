import * as Linkcheck from "@civicstack/core-linkcheck"
import { runSchedules } from "@civicstack/jobs"
import { Effect, Layer } from "effect"
import type { ServerConfig } from "../config"

const USER_AGENT_PRODUCT = "civicstack-linkcheck/0.1"

/** The link checking service of this copy: its domain layer (for the HTTP handlers) and its background workers. */
export const linkcheckLayers = (config: ServerConfig) => {
  const checkerConfig = {
    allowPrivateAddresses: config.linkcheck.allowPrivateAddresses,
    suspiciousDomains: config.linkcheck.suspiciousDomains,
    internalDomains: config.linkcheck.internalDomains,
    perHostConnections: config.linkcheck.perHostConcurrency
  }
  const foundations = Layer.mergeAll(
    Linkcheck.Checker.layer(checkerConfig),
    Linkcheck.CheckSignal.layer,
    Linkcheck.storeLayerSql,
    Linkcheck.webhookTransportLayer({
      allowPrivateAddresses: config.linkcheck.allowPrivateAddresses,
      userAgent: USER_AGENT_PRODUCT
    })
  )

  const grace = `${config.shutdownGraceSeconds} seconds` as const
  const workers = Layer.scopedDiscard(
    Effect.all([
      Linkcheck.runScheduler({
        concurrency: config.linkcheck.concurrency,
        perHostConcurrency: config.linkcheck.perHostConcurrency,
        shutdownGracePeriod: grace
      }),
      Linkcheck.runWebhookWorker({ concurrency: 8, shutdownGracePeriod: grace }),
      Linkcheck.runCleanupWorker,
      runSchedules([Linkcheck.cleanupSchedule()])
    ], { concurrency: "unbounded", discard: true }).pipe(
      Effect.tapErrorCause((cause) => Effect.logError("Link checking workers stopped", cause)),
      Effect.forkScoped
    )
  )

  const service = Linkcheck.linkCheckerLayer
  return Layer.merge(service, workers).pipe(Layer.provideMerge(foundations))
}
