import { JobQueue, layerMemory as jobQueueMemory } from "@civicstack/jobs"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect, Layer, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { EmailQueue } from "./delivery/EmailQueue"
import { Alerts, alertsFromParts } from "./services/Alerts"
import { AlertsParts } from "./services/AlertsParts"
import type { AlertsSettings } from "./settings"
import { defaultAlertsSettings } from "./settings"
import { AlertsStore } from "./storage/AlertsStore"
import { layerMemory as storeMemory } from "./storage/memory"
import { layerSql as storeSql } from "./storage/sql"

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
        emails: yield* EmailQueue
      }
    })
  )

/**
 * The service over the store, job queue and email queue the caller provides; `layerSql` and `layerMemory` are built
 * on it.
 */
export const serviceOver = (
  settings: Partial<AlertsSettings>
): Layer.Layer<Alerts | AlertsParts, never, AlertsStore | JobQueue | EmailQueue> =>
  alertsFromParts.pipe(Layer.provideMerge(partsLayer(settings)))

/**
 * The email alert service over an `SqlClient` (PostgreSQL, or PGlite embedded) and the host's job queue. Run
 * `migrate` first. The email queue comes from the host for now.
 */
export const layerSql = (
  settings: Partial<AlertsSettings> = {}
): Layer.Layer<Alerts | AlertsParts, never, SqlClient | JobQueue | EmailQueue> =>
  serviceOver(settings).pipe(Layer.provide(storeSql))

/** The email alert service in memory, with a job queue of its own: for tests, scripts and the CLI. */
export const layerMemory = (
  settings: Partial<AlertsSettings> = {}
): Layer.Layer<Alerts | AlertsParts, never, EmailQueue> =>
  serviceOver(settings).pipe(Layer.provide(Layer.merge(storeMemory, jobQueueMemory)))
