import { JobQueue, layerMemory as jobQueueMemory, runSchedules } from "@civicstack/jobs"
import { keepRunning } from "@civicstack/kit"
import { openAccess } from "@civicstack/kit/access"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect, Layer } from "effect"
import { LinkcheckAccess } from "./api/access"
import { LinkChecker } from "./services/LinkChecker"
import { LinkcheckParts } from "./services/LinkcheckParts"
import type { LinkcheckSettings } from "./settings"
import { defaultLinkcheckSettings } from "./settings"
import type { LinkcheckStore } from "./storage/LinkcheckStore"
import { layerMemory as storeMemory } from "./storage/memory"
import { layerSql as storeSql } from "./storage/sql"
import { cleanupSchedule, runCleanupWorker } from "./workers/cleanup"
import { runScheduler } from "./workers/scheduler"
import { runWebhookWorker } from "./workers/webhookSender"

/** The service over the store and job queue the caller provides; `layerSql` and `layerMemory` are built on it. */
export const serviceOver = (
  settings: Partial<LinkcheckSettings>
): Layer.Layer<LinkChecker | LinkcheckParts, never, LinkcheckStore | JobQueue> =>
  LinkChecker.layer.pipe(Layer.provideMerge(LinkcheckParts.layer({ ...defaultLinkcheckSettings, ...settings })))

/**
 * The link checking service over an `SqlClient` (PostgreSQL, or PGlite embedded) and the host's job queue. Run
 * `migrate` first. Add `workers` in the copies that should check links and send webhooks.
 */
export const layerSql = (
  settings: Partial<LinkcheckSettings> = {}
): Layer.Layer<LinkChecker | LinkcheckParts, never, SqlClient | JobQueue> =>
  serviceOver(settings).pipe(Layer.provide(storeSql()))

/** The link checking service in memory, with a job queue of its own: for tests, scripts and the CLI. */
export const layerMemory = (settings: Partial<LinkcheckSettings> = {}): Layer.Layer<LinkChecker | LinkcheckParts> =>
  serviceOver(settings).pipe(Layer.provide(Layer.merge(storeMemory(), jobQueueMemory)))

/**
 * The background work of the service built by `layerSql` or `layerMemory`: the scheduler that claims and runs
 * pending checks, the webhook sender and the daily cleanup. They run while the layer's scope is open; closing it
 * stops them, letting running checks and deliveries finish within the shutdown grace period.
 */
export const workers: Layer.Layer<never, never, LinkcheckParts> = Layer.scopedDiscard(
  Effect.gen(function*() {
    const parts = yield* LinkcheckParts
    const { settings } = parts
    yield* Effect.all([
      keepRunning("Link checking scheduler", runScheduler({
        ...settings.scheduler,
        concurrency: settings.concurrency,
        perHostConcurrency: settings.perHostConcurrency,
        shutdownGracePeriod: settings.shutdownGracePeriod
      })),
      keepRunning("Link checking webhook sender", runWebhookWorker({
        concurrency: settings.webhookConcurrency,
        shutdownGracePeriod: settings.shutdownGracePeriod,
        ...(settings.scheduler?.pollInterval === undefined ? {} : { pollInterval: settings.scheduler.pollInterval })
      })),
      keepRunning("Link checking cleanup", runCleanupWorker),
      keepRunning("Link checking cleanup schedule", runSchedules([cleanupSchedule(settings.retention)]))
    ], { concurrency: "unbounded", discard: true }).pipe(
      Effect.provideService(JobQueue, parts.jobs),
      Effect.provideService(LinkcheckParts, parts),
      Effect.forkScoped
    )
  })
)

/**
 * Lets every caller use the link checking API: for a host that checks its callers itself, in front of these
 * handlers. The reference server checks single sign-on tokens instead.
 */
export const layerOpenAccess: Layer.Layer<LinkcheckAccess> = openAccess(LinkcheckAccess)
