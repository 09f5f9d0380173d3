import { JobQueue } from "@civicstack/jobs"
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as SqlClient from "@effect/sql/SqlClient"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Duration, Effect, Layer } from "effect"
import { MetricsExport, metricsExportLayer } from "../observability/metrics"
import type { ServiceSlot, SlotContext } from "../services/slot"
import { Draining } from "./draining"
import { docsRoutes } from "./docs"
import { requestGuard } from "./errorEnvelope"
import { HealthApi, NotReady, Ready } from "./health"
import { ReadinessSections } from "./readiness"

const healthApi = HttpApi.make("civicstack").add(HealthApi)

const DATABASE_CHECK_TIMEOUT = Duration.seconds(2)

const HealthLive = HttpApiBuilder.group(healthApi, "health", (handlers) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const jobs = yield* JobQueue
    const draining = yield* Draining
    const sections = yield* ReadinessSections
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
          const services = yield* sections.read.pipe(
            Effect.catchAll(() => new NotReady({ error: "A service could not report its work" }))
          )
          return new Ready({
            status: "ok",
            database: "ok",
            services,
            queues
          })
        }))
  }))

/** `GET /metrics`: the Prometheus text format, each service's backlog read as the readiness check reads it. */
const metricsRoute = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const metrics = yield* MetricsExport
    const sections = yield* ReadinessSections
    yield* router.get(
      "/metrics",
      Effect.map(metrics.render(sections.read), (text) =>
        HttpServerResponse.text(text, { contentType: "text/plain; version=0.0.4; charset=utf-8" }))
    )
  })
).pipe(Layer.provide(metricsExportLayer))

/** The API this copy serves: the health checks and the endpoints of the services it serves, side by side. */
export const servedApi = (slots: ReadonlyArray<ServiceSlot>) =>
  slots.reduce<HttpApi.HttpApi<"civicstack", HttpApiGroup.HttpApiGroup.Any, HttpApiDecodeError, never>>(
    (api, slot) => api.addHttpApi(slot.api),
    healthApi
  )

/** The OpenAPI documents this copy publishes: each service's and the host's own health checks. */
export const publishedDocuments = (slots: ReadonlyArray<ServiceSlot>) => [
  ...slots.map(({ api, name, title }) => ({ name, title, api })),
  { name: "server", title: "civicstack server: health checks", api: healthApi }
]

/**
 * The HTTP API of this copy, with every slot's handlers and the documents of their contracts. A service this copy
 * does not serve answers 404.
 */
export const apiLayer = (slots: ReadonlyArray<ServiceSlot>, options: { readonly metrics: boolean }) => {
  const api = servedApi(slots)
  const readiness = slots.reduce<Layer.Layer<never, never, SlotContext | ReadinessSections>>(
    (all, slot) => Layer.merge(all, slot.readiness),
    Layer.empty
  )
  return HttpApiBuilder.api(api).pipe(
    Layer.provide([
      HealthLive.pipe(Layer.provide(readiness)),
      requestGuard(api),
      docsRoutes(publishedDocuments(slots)),
      ...(options.metrics ? [metricsRoute.pipe(Layer.provide(readiness))] : []),
      ...slots.map((slot) => slot.routes)
    ]),
    Layer.provide(ReadinessSections.layer)
  )
}
