import { JobQueue, layerMemory as jobQueueMemory } from "@civicstack/jobs"
import { openAccess } from "@civicstack/kit/access"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect, Layer, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { AlertsAccess } from "./api/access"
import { Alerts } from "./services/Alerts"
import { AlertsOperations } from "./services/AlertsOperations"
import { AlertsParts } from "./services/AlertsParts"
import type { EmailProvider } from "./services/EmailProvider"
import { EmailQueue } from "./services/EmailQueue"
import type { AlertsSettings } from "./settings"
import { defaultAlertsSettings } from "./settings"
import { AlertsStore } from "./storage/AlertsStore"
import { EmailStore } from "./storage/EmailStore"
import { layerMemory as storesMemory } from "./storage/memory"
import { layerSql as storesSql } from "./storage/sql"
import { DeliveryPause } from "./services/DeliveryPause"
import { deliveryWorkers } from "./workers/deliveryWorkers"

const partsLayer = (settings: Partial<AlertsSettings>) =>
  Layer.effect(
    AlertsParts,
    Effect.gen(function*() {
      const authTokenSecret = settings.authTokenSecret ?? Redacted.make(randomBytes(32).toString("base64url"))
      if (settings.authTokenSecret === undefined) {
        yield* Effect.logWarning(
          "Email alerts: no auth token secret was given, so a random one is used; the links in auth-token emails " +
            "stop working when this process stops"
        )
      }
      return {
        settings: { ...defaultAlertsSettings, ...settings, authTokenSecret },
        store: yield* AlertsStore,
        jobs: yield* JobQueue,
        emails: yield* EmailQueue,
        emailStore: yield* EmailStore,
        deliveryPause: yield* DeliveryPause
      }
    })
  ).pipe(Layer.provide(DeliveryPause.layer))

/** The service over every port given, the email queue included (tests give a recording one). */
export const serviceWithQueue = (
  settings: Partial<AlertsSettings>
): Layer.Layer<Alerts | AlertsOperations | AlertsParts, never, AlertsStore | EmailStore | EmailQueue | JobQueue> =>
  AlertsOperations.layer.pipe(
    Layer.provideMerge(Alerts.layer),
    Layer.provideMerge(partsLayer(settings))
  )

/** The service over the stores and job queue the caller provides; `layerSql` and `layerMemory` are built on it. */
export const serviceOver = (
  settings: Partial<AlertsSettings>
): Layer.Layer<Alerts | AlertsOperations | AlertsParts, never, AlertsStore | EmailStore | JobQueue> =>
  serviceWithQueue(settings).pipe(Layer.provide(EmailQueue.layer))

/** Both stores and a job queue, in memory. */
export const memoryPorts = (): Layer.Layer<AlertsStore | EmailStore | JobQueue> =>
  Layer.merge(storesMemory(), jobQueueMemory)

/**
 * The email alert service over an `SqlClient` (PostgreSQL, or PGlite embedded) and the host's job queue. Run
 * `migrate` first. Add `workers` in the copies that should fan out notifications and send emails. Say
 * `jobQueueInSameDatabase` when the job queue is `@civicstack/jobs`' `layerSql` on the same database.
 */
export const layerSql = (
  settings: Partial<AlertsSettings> = {}
): Layer.Layer<Alerts | AlertsOperations | AlertsParts, never, SqlClient | JobQueue> =>
  serviceOver(settings).pipe(
    Layer.provide(storesSql({ jobQueueInSameDatabase: settings.jobQueueInSameDatabase ?? false }))
  )

/** The email alert service in memory, with a job queue of its own: for tests, scripts and the CLI. */
export const layerMemory = (
  settings: Partial<AlertsSettings> = {}
): Layer.Layer<Alerts | AlertsOperations | AlertsParts> =>
  serviceOver(settings).pipe(Layer.provide(memoryPorts()))

/**
 * The background work of the service built by `layerSql` or `layerMemory`: fan-out of notifications, delivery
 * through the `EmailProvider` the host gives (`emailProviderLayer`), the daily and weekly digests and the retention
 * of old emails. It runs while the layer's scope is open; closing it stops the work, and emails being sent go back
 * to the queue.
 */
export const workers: Layer.Layer<never, never, AlertsParts | EmailProvider> = Layer.unwrapEffect(
  Effect.map(AlertsParts, (parts) =>
    deliveryWorkers({ ...parts.settings.delivery, publicSiteUrl: parts.settings.publicSiteUrl }).pipe(
      Layer.provide(Layer.mergeAll(
        Layer.succeed(AlertsStore, parts.store),
        Layer.succeed(EmailStore, parts.emailStore),
        Layer.succeed(JobQueue, parts.jobs),
        Layer.succeed(DeliveryPause, parts.deliveryPause)
      ))
    ))
)

/** Lets every caller use the email alert API: for a host that checks its callers itself, in front of the handlers. */
export const layerOpenAccess: Layer.Layer<AlertsAccess> = openAccess(AlertsAccess)
