import * as Jobs from "@civicstack/jobs"
import { Effect, Layer } from "effect"
import type { ServerConfig } from "./config"
import { DatabaseNotifications, databaseLayer, describeDatabase } from "./database"
import { Draining } from "./http/draining"
import { httpHostLayer } from "./http/host"
import { migrateAll } from "./migrations"

/** The database, migrated before anything else starts. */
export const migratedDatabaseLayer = (config: ServerConfig) =>
  Layer.effectDiscard(
    migrateAll.pipe(Effect.tap(() => Effect.logInfo("Database ready").pipe(Effect.annotateLogs({ database: describeDatabase(config.database) }))))
  ).pipe(Layer.provideMerge(databaseLayer(config.database)))

const jobQueueLayer = Layer.unwrapEffect(
  Effect.map(DatabaseNotifications, ({ listen }) => Jobs.layerSql({ listen }))
)

/**
 * The whole reference server: database, job queue, the HTTP host and the workers of the enabled services. It
 * exposes the listening `HttpServer` and the `SqlClient`, for tests and tools that run it in-process.
 */
export const serverLayer = (config: ServerConfig) =>
  httpHostLayer(config).pipe(
    Layer.provide(Draining.layer),
    Layer.provide(jobQueueLayer),
    Layer.provideMerge(migratedDatabaseLayer(config))
  )
