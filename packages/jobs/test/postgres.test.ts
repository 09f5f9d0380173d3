import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { SqlClient } from "@effect/sql/SqlClient"
import { Deferred, Effect, Layer, Redacted, Ref } from "effect"
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import type { JobInfo } from "../src/index"
import { JobQueue, layerSql, migrate, runWorker } from "../src/index"
import { killable } from "./fixtures/killable"
import { eventually } from "./helpers"
import { createTestDatabase, postgresBackend } from "./postgres"
import { jobQueueSuite } from "./suite"

const serverUrl = process.env["TEST_DATABASE_URL"]

describe.skipIf(serverUrl === undefined)("PostgreSQL", () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>
  beforeAll(async () => {
    database = await createTestDatabase(serverUrl!, "suite")
  })
  afterAll(() => database?.drop())

  jobQueueSuite("PostgreSQL", postgresBackend(() => database.url), { transactional: true })

  const pool = () => PgClient.layer({ url: Redacted.make(database.url), maxConnections: 2 })

  it.live("migrate can run from several copies at once, and again", () =>
    Effect.gen(function*() {
      const once = Effect.provide(migrate, pool())
      yield* Effect.all([once, once, once, once], { concurrency: "unbounded" })
      yield* once
      const migrations = yield* Effect.flatMap(SqlClient, (sql) => sql`SELECT migration_id FROM jobs.migrations ORDER BY migration_id`).pipe(
        Effect.provide(pool())
      )
      expect(migrations).toEqual([{ migration_id: 1 }, { migration_id: 2 }])
    }))

  it.live("a job whose worker process is killed runs again after its lease expires", () =>
    Effect.gen(function*() {
      const jobs = yield* JobQueue
      const sql = yield* SqlClient
      yield* sql`TRUNCATE jobs.jobs`
      const { id } = yield* jobs.enqueue(killable, "survive me")

      const started = yield* Deferred.make<string>()
      const child = yield* Effect.acquireRelease(
        Effect.sync(() =>
          spawn(
            process.execPath,
            ["--import", "tsx", "--conditions=@civicstack/source", fileURLToPath(new URL("fixtures/killableWorker.ts", import.meta.url))],
            { env: { ...process.env, JOBS_DATABASE_URL: database.url }, stdio: ["ignore", "pipe", "inherit"] }
          )
        ),
        (child) => Effect.sync(() => child.kill("SIGKILL"))
      )
      child.stdout.on("data", (chunk: Buffer) => Deferred.unsafeDone(started, Effect.succeed(chunk.toString().trim())))
      expect(yield* Deferred.await(started)).toBe(`started ${id} attempt 1`)
      child.kill("SIGKILL")

      const runs = yield* Ref.make<ReadonlyArray<JobInfo>>([])
      yield* Effect.forkScoped(runWorker(killable, (_, job) => Ref.update(runs, (all) => [...all, job]), {
        pollInterval: "200 millis"
      }))
      yield* eventually(Effect.map(Ref.get(runs), (all) => all.length > 0), { what: "the job to run again" })
      expect(yield* Ref.get(runs)).toMatchObject([{ id, attempt: 2 }])
    }).pipe(
      Effect.scoped,
      Effect.provide(Layer.unwrapEffect(Effect.sync(() => layerSql().pipe(Layer.provideMerge(pool())))))
    ), 60_000)
})
