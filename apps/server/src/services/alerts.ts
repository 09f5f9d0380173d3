import * as Alerts from "@civicstack/core-alerts"
import { ALERTS_APPLICATION, AlertsAccess, AlertsCallbacksGroup, AlertsGroup, AlertsHealthGroup } from "@civicstack/core-alerts/api"
import * as HttpApi from "@effect/platform/HttpApi"
import { Config, Duration, Effect, Layer, Redacted } from "effect"
import * as Path from "node:path"
import type { ServerConfig } from "../config"
import { ReadinessSections } from "../http/readiness"
import { keptSecret } from "./keptSecret"
import type { ServiceSettings, ServiceSlot, SharedServices } from "./slot"

/**
 * The email alert sections of the server's configuration: `ALERTS_...`, and the email provider's (`EMAIL_PROVIDER`,
 * `SMTP_URL`, `NOTIFY_...`); the `log` provider writes to `DATA_DIR/outbox`.
 */
export const alertsSettings: ServiceSettings<"alerts", {
  readonly alerts: Alerts.AlertsConfig
  readonly email: Alerts.EmailSettings
}> = {
  name: "alerts",
  config: (dataDir) =>
    Config.all({
      alerts: Alerts.alertsConfig,
      email: Alerts.emailProviderConfig({ outboxDirectory: Path.join(dataDir, "outbox") })
    }),
  secretVariables: ["SMTP_URL", "NOTIFY_API_KEY", "ALERTS_AUTH_TOKEN_SECRET", "NOTIFY_CALLBACK_BEARER_TOKEN"],
  productionProblems: ({ alerts }) =>
    alerts.authTokenSecret === undefined
      ? ["ALERTS_AUTH_TOKEN_SECRET must be set when NODE_ENV=production (the key of the links in auth-token emails)"]
      : []
}

/** The email alert endpoints as this server serves them, under the server's API identifier. */
const api = HttpApi.make("civicstack").add(AlertsGroup).add(AlertsHealthGroup).add(AlertsCallbacksGroup)

/** Subscriber ids per fan-out statement on the embedded database (10,000 on PostgreSQL). */
const PGLITE_FAN_OUT_CHUNK_SIZE = 1_000

/** The email alert service over this copy's database: one layer, shared by its routes, workers and readiness. */
export const alertsServiceLayer = (config: ServerConfig) =>
  Layer.unwrapEffect(Effect.gen(function*() {
    const authTokenSecret = config.alerts.authTokenSecret ?? Redacted.make(yield* keptSecret(
      config.dataDir,
      "alerts-auth-token-secret",
      "base64url",
      "Email alerts: auth-token links are signed with a secret made now and kept in the data directory"
    ))
    return Alerts.layerSql({
      ...config.alerts,
      authTokenSecret,
      publicSiteUrl: config.publicSiteUrl,
      delivery: {
        ...config.alerts.delivery,
        rateLimitPerSecond: config.email.rateLimit,
        shutdownGracePeriod: Duration.seconds(config.shutdownGraceSeconds),
        // the embedded database runs one statement at a time: a request's statement waits for the chunk in
        // progress, so chunks are small there
        ...(config.database._tag === "Pglite" ? { fanOutChunkSize: PGLITE_FAN_OUT_CHUNK_SIZE } : {})
      },
      jobQueueInSameDatabase: true
    })
  }))

/** The listener of SMTP bounces, in the copies that run workers, when `EMAIL_BOUNCE_SMTP_PORT` is set. */
const bounceListener = (config: ServerConfig) => {
  const bounces = config.email.bounces
  return bounces?.listener === undefined
    ? Layer.empty
    : Alerts.bounceListenerLayer({ address: bounces.address, ...bounces.listener })
}

/** The email alert service of this copy: routes behind `access`, workers sending through the configured provider. */
export const alertsSlot = (config: ServerConfig, shared: SharedServices): ServiceSlot => {
  const service = alertsServiceLayer(config)
  const access = shared.accessFor(AlertsAccess, ALERTS_APPLICATION)
  return {
    name: "alerts",
    title: "civicstack email alerts",
    preparedByEveryCopy: false,
    api,
    migrate: Alerts.migrate,
    // the embedded database has one process: what was claimed when it stopped can be sent again at once
    prepare: config.database._tag === "Pglite"
      ? Effect.gen(function*() {
        const reclaimed = yield* (yield* Alerts.AlertsOperations).reclaimAfterRestart
        if (reclaimed > 0) yield* Effect.logInfo("Email alerts: emails claimed before the restart are due again").pipe(
          Effect.annotateLogs({ emails: reclaimed })
        )
      }).pipe(Effect.provide(service))
      : Effect.void,
    routes: Alerts.alertsHandlers(api).pipe(Layer.provide(service), Layer.provide(access)),
    workers: Layer.merge(
      Alerts.workers.pipe(Layer.provide(Alerts.emailProviderLayer(config.email.provider))),
      bounceListener(config)
    ).pipe(Layer.provide(service)),
    fastAnswers: Layer.empty,
    readiness: Layer.effectDiscard(Effect.gen(function*() {
      const alerts = yield* Alerts.Alerts
      const sections = yield* ReadinessSections
      yield* sections.add("alerts", Effect.map(alerts.workload, (workload) => ({
        queue_size: workload.queueSize,
        oldest_pending_email_age_seconds: workload.oldestPendingAge === null
          ? null
          : Math.round(Duration.toSeconds(workload.oldestPendingAge)),
        // how long this copy's delivery stays paused, while the email provider refuses to send for the service
        delivery_paused_seconds: workload.deliveryPausedUntil === null
          ? 0
          : Math.max(1, Math.ceil((workload.deliveryPausedUntil.getTime() - Date.now()) / 1000))
      })))
    })).pipe(Layer.provide(service))
  }
}
