import { LinkcheckGroup, linkcheckHandlers } from "@civicstack/core-linkcheck"
import { JobQueue } from "@civicstack/jobs"
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as SqlClient from "@effect/sql/SqlClient"
import { Duration, Effect, Layer } from "effect"
import { Draining } from "./draining"
import type { ServerConfig } from "../config"
import { linkcheckLayers } from "../services/linkcheck"
import { ErrorEnvelope } from "./errorEnvelope"
import { HealthApi, NotReady, Ready } from "./health"

export class CivicstackApi extends HttpApi.make("civicstack").add(HealthApi).add(LinkcheckGroup) {}

const DATABASE_CHECK_TIMEOUT = Duration.seconds(2)

const HealthLive = HttpApiBuilder.group(CivicstackApi, "health", (handlers) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const jobs = yield* JobQueue
    const draining = yield* Draining
    return handlers
      .handle("live", () => Effect.succeed({ status: "ok" as const }))
      .handle("ready", () =>
        Effect.gen(function*() {
          if (yield* draining.isDraining) return yield* new NotReady({ error: "Shutting down" })
          yield* sql`SELECT 1`.pipe(
            Effect.timeoutFail({
              duration: DATABASE_CHECK_TIMEOUT,
              onTimeout: () => new NotReady({ error: "The database did not answer within 2 seconds" })
            }),
            Effect.catchTag("SqlError", (error) => new NotReady({ error: `The database is unreachable: ${error.message}` }))
          )
          const queues = yield* jobs.stats.pipe(
            Effect.catchAll((error) => new NotReady({ error: `The job queue is unreachable: ${error.message}` }))
          )
          return new Ready({
            status: "ok",
            database: "ok",
            queues: queues.map((stats) => ({
              queue: stats.queue,
              queued: stats.queued,
              scheduled: stats.scheduled,
              running: stats.running,
              dead: stats.dead,
              oldest_runnable_age_ms: stats.oldestRunnableAgeMs
            }))
          })
        }))
  }))

/** Leaves a service's routes out while keeping the layer's type, so the API's type stays that of every service. */
const notMounted = <A, E, R>(_routes: Layer.Layer<A, E, R>) => Layer.empty as unknown as Layer.Layer<A, E, R>

/**
 * The HTTP API of this copy: health checks and the enabled services. A disabled service's routes are not mounted,
 * so they answer 404.
 */
export const apiLayer = (config: ServerConfig) => {
  const linkcheckRoutes = linkcheckHandlers(CivicstackApi).pipe(Layer.provide(linkcheckLayers(config)))
  return HttpApiBuilder.api(CivicstackApi).pipe(
    Layer.provide([
      HealthLive,
      ErrorEnvelope,
      config.services.includes("linkcheck") ? linkcheckRoutes : notMounted(linkcheckRoutes)
    ])
  )
}
