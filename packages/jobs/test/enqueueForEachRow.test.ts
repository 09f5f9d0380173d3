import { PgliteClient } from "@civicstack/sql-pglite"
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql/SqlClient"
import type { Scope } from "effect"
import { Duration, Effect, Layer, Ref, Schema } from "effect"
import { enqueueForEachRow, JobDefinition, JobQueue, layerSql, runWorker } from "../src/index"
import { eventually } from "./helpers"
import { pgliteForFile } from "./pgliteForFile"

const database = pgliteForFile()

const note = JobDefinition.make({ queue: "notes", payload: Schema.Struct({ text: Schema.String }) })

/** Built per test, once `beforeAll` has opened the database. */
const queue = () =>
  Layer.unwrapEffect(
    Effect.map(PgliteClient.PgliteClient, (client) => layerSql({ listen: client.listen }))
  ).pipe(Layer.provideMerge(Layer.effectContext(Effect.sync(database))))

const withQueue = <A, E>(effect: Effect.Effect<A, E, JobQueue | SqlClient | Scope.Scope>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    yield* sql`TRUNCATE jobs.jobs RESTART IDENTITY`
    return yield* effect
  }).pipe(Effect.scoped, Effect.provide(Layer.unwrapEffect(Effect.sync(queue))))

/** One statement: as many rows as `count` in the caller's CTE, and the jobs for them. */
const writeRows = (count: number, text: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const jobs = yield* enqueueForEachRow(note, { text }, "written")
    return yield* sql<{ n: number }>`
      WITH written AS (SELECT n FROM generate_series(1, ${count}::int) AS n), ${jobs}
      SELECT count(*)::int AS n FROM written`
  })

describe("enqueueForEachRow (PGlite)", () => {
  it.effect("enqueues a job for each row of the caller's CTE, in the caller's statement, and none for no row", () =>
    withQueue(Effect.gen(function*() {
      const jobs = yield* JobQueue
      yield* writeRows(0, "nothing")
      expect(yield* jobs.stats).toEqual([])
      yield* writeRows(2, "twice")
      const claimed = yield* jobs.claim({ queue: note.queue, workerId: "test", limit: 10, leaseDuration: Duration.minutes(1) })
      expect(claimed.map((job) => job.payload)).toEqual([{ text: "twice" }, { text: "twice" }])
    })))

  it.effect("wakes an idle worker when the statement commits, instead of leaving the job to its next poll", () =>
    withQueue(Effect.gen(function*() {
      const handled = yield* Ref.make<ReadonlyArray<string>>([])
      yield* Effect.forkScoped(
        runWorker(note, ({ text }) => Ref.update(handled, (all) => [...all, text]), { pollInterval: "1 hour" })
      )
      yield* writeRows(1, "before")
      yield* eventually(Effect.map(Ref.get(handled), (all) => all.length === 1), { what: "the first job" })
      yield* writeRows(1, "after")
      yield* eventually(Effect.map(Ref.get(handled), (all) => all.length === 2), { what: "a wake-up at commit" })
      expect(yield* Ref.get(handled)).toEqual(["before", "after"])
    })))
})
