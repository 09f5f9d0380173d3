import { JobQueue, layerMemory as jobQueueMemory, runSchedules } from "@civicstack/jobs"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect, Layer, Schedule } from "effect"
import { LinkInspector } from "./services/LinkInspector"
import { CheckSignal } from "./services/CheckSignal"
import { runScheduler } from "./services/CheckScheduler"
import { cleanupSchedule, runCleanupWorker } from "./services/cleanup"
import { makeCompletion } from "./services/completion"
import { LinkChecker, linkCheckerFromParts } from "./services/LinkChecker"
import { LinkcheckParts } from "./services/LinkcheckParts"
import { runWebhookWorker } from "./services/webhookDelivery"
import { WebhookTransport } from "./services/webhookTransport"
import { webhookTransportLayer } from "./services/webhookTransport"
import type { LinkcheckSettings } from "./settings"
import { defaultLinkcheckSettings } from "./settings"
import { LinkcheckStore } from "./storage/LinkcheckStore"
import { layerMemory as storeMemory } from "./storage/memory"
import { layerSql as storeSql } from "./storage/sql"

const USER_AGENT_PRODUCT = "civicstack-linkcheck/0.1"

const partsLayer = (settings: LinkcheckSettings) =>
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
      CheckSignal.layer,
      webhookTransportLayer({
        allowPrivateAddresses: settings.allowPrivateAddresses,
        userAgent: USER_AGENT_PRODUCT,
        ...(settings.resolver === undefined ? {} : { lookup: settings.resolver })
      })
    ))
  )

/** The service over the store and job queue the caller provides; `layerSql` and `layerMemory` are built on it. */
export const serviceOver = (
  settings: Partial<LinkcheckSettings>
): Layer.Layer<LinkChecker | LinkcheckParts, never, LinkcheckStore | JobQueue> =>
  linkCheckerFromParts.pipe(Layer.provideMerge(partsLayer({ ...defaultLinkcheckSettings, ...settings })))

/**
 * The link checking service over an `SqlClient` (PostgreSQL, or PGlite embedded) and the host's job queue. Run
 * `migrate` first. Add `workers` in the copies that should check links and send webhooks.
 */
export const layerSql = (
  settings: Partial<LinkcheckSettings> = {}
): Layer.Layer<LinkChecker | LinkcheckParts, never, SqlClient | JobQueue> =>
  serviceOver(settings).pipe(Layer.provide(storeSql))

/** The link checking service in memory, with a job queue of its own: for tests, scripts and the CLI. */
export const layerMemory = (settings: Partial<LinkcheckSettings> = {}): Layer.Layer<LinkChecker | LinkcheckParts> =>
  serviceOver(settings).pipe(Layer.provide(Layer.merge(storeMemory, jobQueueMemory)))

/** Restarts a worker that stopped on a failure (the database went away), sooner at first, then every 5 seconds. */
const keepRunning = <A, E, R>(name: string, worker: Effect.Effect<A, E, R>) =>
  worker.pipe(
    Effect.tapErrorCause((cause) => Effect.logWarning(`Link checking ${name} stopped; starting it again`, cause)),
    Effect.retry(Schedule.exponential("200 millis").pipe(Schedule.union(Schedule.spaced("5 seconds"))))
  )

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
      keepRunning("scheduler", runScheduler({
        ...settings.scheduler,
        concurrency: settings.concurrency,
        perHostConcurrency: settings.perHostConcurrency,
        shutdownGracePeriod: settings.shutdownGracePeriod
      })),
      keepRunning("webhook sender", runWebhookWorker({
        concurrency: settings.webhookConcurrency,
        shutdownGracePeriod: settings.shutdownGracePeriod,
        ...(settings.scheduler?.pollInterval === undefined ? {} : { pollInterval: settings.scheduler.pollInterval })
      })),
      keepRunning("cleanup", runCleanupWorker),
      keepRunning("cleanup schedule", runSchedules([cleanupSchedule(settings.retention)]))
    ], { concurrency: "unbounded", discard: true }).pipe(
      Effect.provideService(JobQueue, parts.jobs),
      Effect.provideService(LinkcheckParts, parts),
      Effect.forkScoped
    )
  })
)
