import { layerSql as jobQueueSql, migrate as migrateJobs } from "@civicstack/jobs"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Duration, Effect, Layer } from "effect"
import { layerMemory, layerSql, workers } from "../../src/layers"
import { migrate } from "../../src/migrations/index"
import type { LinkChecker } from "../../src/services/LinkChecker"
import type { LinkcheckParts } from "../../src/services/LinkcheckParts"
import type { LinkcheckSettings } from "../../src/settings"

export type ServiceUnderTest = Layer.Layer<LinkChecker | LinkcheckParts, unknown>

/** As the reference server runs it for tests: checks and webhooks may reach the local fixtures. */
const settings: Partial<LinkcheckSettings> = { allowPrivateAddresses: true, shutdownGracePeriod: Duration.seconds(1) }

/** The service in memory, its workers running. */
export const memoryBackend = (): ServiceUnderTest => workers.pipe(Layer.provideMerge(layerMemory(settings)))

/** The job queue's and the service's migrations. */
export const migrateBoth = Effect.zipRight(migrateJobs, migrate)

/** `layerSql` with the job queue's SQL adapter over `database`, its workers running. */
export const sqlBackend = (database: Layer.Layer<SqlClient, unknown>): ServiceUnderTest =>
  workers.pipe(
    Layer.provideMerge(layerSql(settings)),
    Layer.provide(jobQueueSql()),
    Layer.provide(database)
  )
