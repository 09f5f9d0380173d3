import * as Jobs from "@civicstack/jobs"
import { Context, Effect, Layer } from "effect"
import type { ServerConfig } from "./config"
import { DatabaseLost, DatabaseNotifications, databaseLayer, describeDatabase } from "./database"
import { Draining } from "./http/draining"
import { httpHostLayer } from "./http/host"
import { tracingLayer } from "./observability/tracing"
import { allSlots } from "./services/index"
import type { ServiceSlot } from "./services/slot"

const serves = (config: ServerConfig, slot: ServiceSlot) => (config.services as ReadonlyArray<string>).includes(slot.name)

/** Every package's migrations, in dependency order: the job queue first, then each service's schema. */
const migrateAll = (slots: ReadonlyArray<ServiceSlot>) =>
  Effect.forEach(
    [{ name: "jobs", migrate: Jobs.migrate }, ...slots],
    ({ migrate, name }) => migrate.pipe(Effect.tap(() => Effect.logDebug("Migrated").pipe(Effect.annotateLogs({ package: name })))),
    { discard: true }
  ).pipe(Effect.withLogSpan("migrations"))

/** The database, with every service's migrations applied before anything else starts. */
export const migratedDatabaseLayer = (config: ServerConfig) =>
  Layer.effectDiscard(
    migrateAll(allSlots(config)).pipe(
      Effect.tap(() => Effect.logInfo("Database ready").pipe(Effect.annotateLogs({ database: describeDatabase(config.database) })))
    )
  ).pipe(Layer.provideMerge(databaseLayer(config.database)))

const jobQueueLayer = Layer.unwrapEffect(
  Effect.map(DatabaseNotifications, ({ listen }) => Jobs.layerSql({ listen }))
)

/** The migrated database and the job queue: what the ops commands work on. */
export const databaseWithJobsLayer = (config: ServerConfig) =>
  jobQueueLayer.pipe(Layer.provideMerge(migratedDatabaseLayer(config)))

/** The slots whose setup this copy runs: those it serves, and those whose setup every copy runs. */
const slotsToPrepare = (config: ServerConfig) =>
  allSlots(config).filter((slot) => slot.preparedByEveryCopy || serves(config, slot))

/** The migrated database and the job queue, with the setup of `slotsToPrepare` done. */
const preparedDatabaseLayer = (config: ServerConfig) =>
  Layer.effectDiscard(
    Effect.zipRight(
      config.database._tag === "Pglite" ? endLeasesOfTheLastRun : Effect.void,
      Effect.forEach(slotsToPrepare(config), (slot) => slot.prepare, { discard: true })
    )
  ).pipe(Layer.provideMerge(databaseWithJobsLayer(config)))

/**
 * The embedded database has one process: the jobs running when it last stopped belong to no one, so they run again
 * now instead of when their leases would run out.
 */
const endLeasesOfTheLastRun = Effect.flatMap(Jobs.JobQueue, (jobs) => jobs.endAllLeases).pipe(
  Effect.tap((ended) =>
    ended === 0 ? Effect.void : Effect.logInfo("Jobs running when the server stopped run again").pipe(
      Effect.annotateLogs({ jobs: ended })
    )
  )
)

/**
 * The whole reference server: database, job queue, the HTTP host (health checks always; the enabled services' routes
 * when this copy serves the web) and the enabled services' workers (when it runs workers). It exposes the
 * listening `HttpServer` and the `SqlClient`, for tests and tools that run it in-process.
 */
export const serverLayer = (config: ServerConfig) => {
  const slots = allSlots(config).filter((slot) => serves(config, slot))
  const workers = config.run.includes("workers") ? slots.map((slot) => slot.workers) : []
  return Layer.mergeAll(httpHostLayer(config, config.run.includes("web") ? slots : []), ...workers).pipe(
    Layer.flatMap((running) => Layer.merge(Layer.succeedContext(running), Draining.beginOnShutdown)),
    Layer.provide(Draining.layer),
    Layer.provideMerge(preparedDatabaseLayer(config)),
    Layer.provide(tracingLayer(config.tracing))
  )
}

/**
 * Runs the server until it is interrupted (SIGTERM), or until its database is lost: then it logs why, shuts down as on
 * SIGTERM and fails, so that the process exits with code 1 and its supervisor starts it again.
 */
export const serveUntilDatabaseLost = (config: ServerConfig) =>
  Effect.scoped(
    Effect.flatMap(Layer.build(serverLayer(config)), (running) =>
      Context.get(running, DatabaseLost).pipe(
        Effect.tapError((error) =>
          Effect.logError("The database was lost; the server stops").pipe(Effect.annotateLogs({ reason: error.message }))
        )
      ))
  )
