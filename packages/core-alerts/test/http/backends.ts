import { layerSql as jobQueueSql, migrate as migrateJobs } from "@civicstack/jobs"
import { PgliteClient } from "@civicstack/sql-pglite"
import { SqlClient } from "@effect/sql/SqlClient"
import { Effect, Layer, ManagedRuntime } from "effect"
import { createTestDatabase as createDatabase, testPool } from "@civicstack/kit/testing"
import { memoryPorts, serviceWithQueue } from "../../src/layers"
import { emailStoreSql } from "../../src/delivery/storage/sql"
import { layerSql as storeSql } from "../../src/storage/sql"
import { migrate } from "../../src/migrations/index"
import type { Alerts } from "../../src/services/Alerts"
import type { AlertsParts } from "../../src/services/AlertsParts"
import type { AlertsSettings } from "../../src/settings"
import { recordingEmailQueue } from "../support/recordingEmailQueue"
import type { RecordingEmailQueue } from "../support/recordingEmailQueue"

export type ServiceUnderTest = Layer.Layer<Alerts | AlertsParts | RecordingEmailQueue, unknown>
export type Backend = (settings: Partial<AlertsSettings>) => ServiceUnderTest

/** The memory stores and job queue, with a recording email queue. */
export const memoryBackend: Backend = (settings) =>
  serviceWithQueue(settings).pipe(Layer.provideMerge(recordingEmailQueue), Layer.provide(memoryPorts))

export const emptyTables = Layer.effectDiscard(Effect.flatMap(SqlClient, (sql) =>
  sql`TRUNCATE alerts.notifications, alerts.subscriptions, alerts.subscribers, alerts.subscriber_lists, jobs.jobs
      RESTART IDENTITY CASCADE`))

const migrateBoth = Effect.zipRight(migrateJobs, migrate)

/** `layerSql` with the job queue's SQL adapter, over `database`; every test starts from empty tables. */
const sqlBackend = (database: Layer.Layer<SqlClient, unknown>): Backend => (settings) =>
  serviceWithQueue(settings).pipe(
    Layer.provide(Layer.mergeAll(jobQueueSql(), storeSql, emailStoreSql)),
    Layer.provideMerge(recordingEmailQueue),
    Layer.provide(emptyTables),
    Layer.provide(database)
  )

/** Opening PGlite takes seconds, so a test file shares one in-memory database. */
export const sharedPglite = () => {
  const runtime = ManagedRuntime.make(Layer.provideMerge(Layer.effectDiscard(migrateBoth), PgliteClient.layer({})))
  const database: Layer.Layer<SqlClient, unknown> = Layer.unwrapEffect(Effect.map(runtime.runtimeEffect, (built) =>
    Layer.succeedContext(built.context)))
  return {
    open: () => runtime.runtime(),
    close: () => runtime.dispose(),
    database,
    backend: sqlBackend(database)
  }
}

/** A database of its own on the server of `serverUrl`, with the jobs and alerts schemas migrated. */
export const createTestDatabase = (serverUrl: string) => createDatabase(serverUrl, "alertshttp", migrateBoth)

export const postgresBackend = (databaseUrl: string): Backend => sqlBackend(testPool(databaseUrl))
