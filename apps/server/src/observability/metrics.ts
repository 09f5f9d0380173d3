import { eventCounter } from "@civicstack/kit"
import { JobQueue } from "@civicstack/jobs"
import * as Metrics from "@effect/opentelemetry/Metrics"
import * as Resource from "@effect/opentelemetry/Resource"
import { PrometheusExporter, PrometheusSerializer } from "@opentelemetry/exporter-prometheus"
import { Context, Effect, Layer, Metric, MetricBoundaries, MetricLabel, Option } from "effect"
import { monitorEventLoopDelay } from "node:perf_hooks"
import serverPackage from "../../package.json" with { type: "json" }
import { DatabaseConnections } from "../database"
import type { ReadinessFigures } from "../http/readiness"

/** Answers by method, route template (`/batch/:id`; `unmatched` for a path no endpoint has) and status. */
const httpRequests = eventCounter(
  "http_server_requests",
  "HTTP requests answered, by method, route template and status"
)

const httpDuration = Metric.histogram(
  "http_server_request_duration_seconds",
  MetricBoundaries.exponential({ start: 0.001, factor: 2, count: 15 }),
  "Time from a request's arrival to its answer, by method and route template"
)

/** Records one answer; synchronous, for answers made outside the HTTP stack too. */
export const recordHttpAnswer = (method: string, route: string | undefined, status: number, seconds: number) => {
  const routeTag = route ?? "unmatched"
  httpRequests.unsafeUpdate(1, [
    MetricLabel.make("method", method),
    MetricLabel.make("route", routeTag),
    MetricLabel.make("status", String(status))
  ])
  httpDuration.unsafeUpdate(seconds, [MetricLabel.make("method", method), MetricLabel.make("route", routeTag)])
}

const gauge = (name: string, description: string) => Metric.gauge(name, { description })

const processGauges = {
  cpuSeconds: gauge("process_cpu_seconds", "CPU time the process used, user and system, in seconds"),
  residentBytes: gauge("process_resident_memory_bytes", "Resident memory of the process"),
  heapUsedBytes: gauge("nodejs_heap_used_bytes", "V8 heap in use"),
  heapTotalBytes: gauge("nodejs_heap_total_bytes", "V8 heap reserved"),
  externalBytes: gauge("nodejs_external_memory_bytes", "Memory held outside the V8 heap (buffers, WebAssembly)"),
  eventLoopDelayP99: gauge("nodejs_eventloop_delay_p99_seconds", "99th percentile of the event loop's delay since the last scrape"),
  uptimeSeconds: gauge("process_uptime_seconds", "Seconds since the process started")
}

const connectionGauges = {
  count: gauge("db_client_connection_count", "Connections of the PostgreSQL pool, by state (used, idle)"),
  max: gauge("db_client_connection_max", "Connections the PostgreSQL pool may open (DATABASE_POOL_SIZE)"),
  pending: gauge("db_client_connection_pending_requests", "Queries waiting for a connection of the PostgreSQL pool")
}

const serviceFigure = gauge("civicstack_service_work", "Each service's backlog as its readiness check reports it, by service and figure")
const queueJobs = gauge("civicstack_job_queue_jobs", "Jobs of the job queue by queue and state (queued, scheduled, running, dead)")
const queueOldestAge = gauge("civicstack_job_queue_oldest_runnable_age_seconds", "Age of the oldest runnable job, by queue")

/**
 * What the server exports in the Prometheus text format: every metric the process records through Effect's `Metric`
 * (the cores' and the host's), read by OpenTelemetry's Prometheus exporter, and figures read at each scrape (the
 * process, the job queue, each service's backlog).
 */
export class MetricsExport extends Context.Tag("@civicstack/server/MetricsExport")<MetricsExport, {
  readonly render: (figures: Effect.Effect<Record<string, ReadinessFigures>, unknown>) => Effect.Effect<string>
}>() {}

export const metricsExportLayer: Layer.Layer<MetricsExport, never, JobQueue | DatabaseConnections> = Layer.scoped(
  MetricsExport,
  Effect.gen(function*() {
    const exporter = new PrometheusExporter({ preventServerStart: true })
    const serializer = new PrometheusSerializer()
    const jobs = yield* JobQueue
    const connections = yield* DatabaseConnections
    const eventLoopDelay = monitorEventLoopDelay({ resolution: 20 })
    eventLoopDelay.enable()
    yield* Effect.addFinalizer(() => Effect.sync(() => eventLoopDelay.disable()))

    const readProcess = Effect.gen(function*() {
      const cpu = process.cpuUsage()
      const memory = process.memoryUsage()
      yield* Metric.set(processGauges.cpuSeconds, (cpu.user + cpu.system) / 1e6)
      yield* Metric.set(processGauges.residentBytes, memory.rss)
      yield* Metric.set(processGauges.heapUsedBytes, memory.heapUsed)
      yield* Metric.set(processGauges.heapTotalBytes, memory.heapTotal)
      yield* Metric.set(processGauges.externalBytes, memory.external)
      yield* Metric.set(processGauges.eventLoopDelayP99, eventLoopDelay.percentile(99) / 1e9)
      yield* Metric.set(processGauges.uptimeSeconds, process.uptime())
      eventLoopDelay.reset()
    })

    const readQueues = Effect.flatMap(jobs.stats, (queues) =>
      Effect.forEach(queues, (stats) =>
        Effect.gen(function*() {
          for (const state of ["queued", "scheduled", "running", "dead"] as const) {
            yield* Metric.set(Metric.tagged(Metric.tagged(queueJobs, "queue", stats.queue), "state", state), stats[state])
          }
          const age = stats.oldestRunnableAgeMs === null ? 0 : stats.oldestRunnableAgeMs / 1000
          yield* Metric.set(Metric.tagged(queueOldestAge, "queue", stats.queue), age)
        }), { discard: true })
    )

    const readConnections = Effect.suspend(() =>
      Option.match(connections.figures(), {
        onNone: () => Effect.void,
        onSome: (figures) =>
          Effect.all([
            Metric.set(Metric.tagged(connectionGauges.count, "state", "used"), figures.used),
            Metric.set(Metric.tagged(connectionGauges.count, "state", "idle"), figures.idle),
            Metric.set(connectionGauges.max, figures.max),
            Metric.set(connectionGauges.pending, figures.waiting)
          ], { discard: true })
      })
    )

    const readServices = (figures: Effect.Effect<Record<string, ReadinessFigures>, unknown>) =>
      Effect.flatMap(figures, (services) =>
        Effect.forEach(Object.entries(services), ([service, figures]) =>
          Effect.forEach(Object.entries(figures), ([figure, value]) =>
            Metric.set(Metric.tagged(Metric.tagged(serviceFigure, "service", service), "figure", figure), value ?? 0), {
            discard: true
          }), { discard: true })
      )

    yield* Metrics.layer(() => exporter).pipe(
      Layer.provide(Resource.layer({ serviceName: "civicstack", serviceVersion: serverPackage.version })),
      Layer.buildWithScope(yield* Effect.scope)
    )

    return {
      render: (figures) =>
        Effect.gen(function*() {
          // a backlog that cannot be read (the database is down) leaves its figures as they were; the rest still shows
          yield* readProcess
          yield* readConnections
          yield* Effect.ignore(readQueues)
          yield* Effect.ignore(readServices(figures))
          const { resourceMetrics } = yield* Effect.promise(() => exporter.collect())
          return serializer.serialize(resourceMetrics)
        })
    }
  })
)
