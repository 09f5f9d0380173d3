import { PgliteClient } from "@civicstack/sql-pglite"
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Schedule, TestClock, TestServices } from "effect"

interface TableState {
  readonly vacuums: number
  readonly analyzes: number
  readonly dead: number
  readonly tuples: number
}

const state = (table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<TableState>`
        SELECT s.vacuum_count::int AS vacuums, s.analyze_count::int AS analyzes, s.n_dead_tup::int AS dead,
          c.reltuples::int AS tuples
        FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid WHERE s.relname = ${table}`,
      (rows) => rows[0]!
    ))

/** Real time: PGlite answers on the event loop, which TestClock does not drive. */
const eventually = <A, E, R>(check: Effect.Effect<A, E, R>) =>
  TestServices.provideLive(Effect.retry(check, Schedule.intersect(Schedule.spaced("25 millis"), Schedule.recurs(200))))

const liveWait = TestServices.provideLive(Effect.sleep("300 millis"))

const withClient = (settings: ReadonlyArray<string>) =>
  Effect.provide(PgliteClient.layer({ settings: ["autovacuum_naptime=30s", ...settings] }))

const tableWithChangedRows = (table: string, rows: number, changed: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.gen(function*() {
      yield* sql`CREATE TABLE ${sql(table)} (id int PRIMARY KEY, value int NOT NULL)`
      yield* sql`INSERT INTO ${sql(table)} SELECT i, 0 FROM generate_series(1, ${rows}::int) AS i`
      // the insert's counts are written out now, so that they do not land after the vacuum's and count as new rows
      yield* sql`SELECT pg_stat_force_next_flush()`
      yield* sql`VACUUM (ANALYZE) ${sql(table)}`
      yield* sql`UPDATE ${sql(table)} SET value = 1 WHERE id <= ${changed}::int`
    }))

describe("PGlite autovacuum (PGlite has no autovacuum process of its own)", () => {
  it.scoped("every autovacuum_naptime vacuums and analyzes the tables past PostgreSQL's thresholds, and only those", () =>
    Effect.gen(function*() {
      yield* tableWithChangedRows("busy", 10_000, 5_000)
      yield* tableWithChangedRows("quiet", 10_000, 100)
      const before = { busy: yield* state("busy"), quiet: yield* state("quiet") }
      expect(before.busy).toMatchObject({ vacuums: 1, analyzes: 1, tuples: 10_000 })

      yield* TestClock.adjust("29 seconds")
      yield* liveWait
      expect(yield* state("busy")).toEqual(before.busy)

      yield* TestClock.adjust("1 second")
      const busy = yield* eventually(Effect.filterOrFail(state("busy"), (now) => now.vacuums === 2))
      expect(busy).toEqual({ vacuums: 2, analyzes: 2, dead: 0, tuples: 10_000 })
      // 100 changed rows of 10,000 are under 50 + 20% dead rows and 50 + 10% changed rows
      expect(yield* state("quiet")).toEqual({ ...before.quiet, dead: 100 })
    }).pipe(withClient([])))

  it.scoped("analyzes a table that was never analyzed once it has rows, so the planner has statistics", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE fresh (id int PRIMARY KEY)`
      yield* sql`INSERT INTO fresh SELECT generate_series(1, 2000)`
      expect((yield* state("fresh")).tuples).toBe(-1)
      yield* TestClock.adjust("30 seconds")
      const fresh = yield* eventually(Effect.filterOrFail(state("fresh"), (now) => now.tuples === 2000))
      expect(fresh.analyzes).toBe(1)
    }).pipe(withClient([])))

  it.scoped("waits for an open transaction to end, and statements sent meanwhile still run", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* tableWithChangedRows("busy", 10_000, 5_000)
      const opened = yield* Deferred.make<void>()
      const finish = yield* Deferred.make<void>()
      const transaction = yield* Effect.fork(sql.withTransaction(Effect.gen(function*() {
        yield* sql`UPDATE busy SET value = 2 WHERE id = 1`
        yield* Deferred.succeed(opened, undefined)
        yield* Deferred.await(finish)
        return yield* state("busy")
      })))
      yield* Deferred.await(opened)
      yield* TestClock.adjust("30 seconds")
      yield* liveWait
      yield* Deferred.succeed(finish, undefined)
      expect((yield* Fiber.join(transaction)).vacuums).toBe(1)
      yield* eventually(Effect.filterOrFail(state("busy"), (now) => now.vacuums === 2))
      expect(yield* sql`SELECT value FROM busy WHERE id = 1`).toEqual([{ value: 2 }])
    }).pipe(withClient([])))

  it.scoped("vacuums a table whose schema and name need quoting", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const table = `odd "name"; DROP TABLE busy; --`
      yield* sql`CREATE SCHEMA ${sql(`My "Schema"`)}`
      yield* tableWithChangedRows("busy", 10, 0)
      yield* sql`CREATE TABLE ${sql(`My "Schema"`)}.${sql(table)} (id int PRIMARY KEY, value int NOT NULL)`
      yield* sql`INSERT INTO ${sql(`My "Schema"`)}.${sql(table)} SELECT i, 0 FROM generate_series(1, 2000) AS i`
      yield* TestClock.adjust("30 seconds")
      yield* eventually(Effect.filterOrFail(state(table), (now) => now.tuples === 2000))
      expect((yield* state("busy")).tuples).toBe(10)
    }).pipe(withClient([])))

  it.scoped("does nothing with autovacuum=off", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* tableWithChangedRows("busy", 10_000, 5_000)
      yield* TestClock.adjust("60 seconds")
      yield* liveWait
      expect((yield* state("busy")).vacuums).toBe(1)
      yield* sql`SELECT 1`
    }).pipe(withClient(["autovacuum=off"])))

  it.scoped("leaves a table with autovacuum_enabled=false alone", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* tableWithChangedRows("kept", 10_000, 5_000)
      yield* sql`ALTER TABLE kept SET (autovacuum_enabled = false)`
      yield* tableWithChangedRows("busy", 10_000, 5_000)
      yield* TestClock.adjust("30 seconds")
      yield* eventually(Effect.filterOrFail(state("busy"), (now) => now.vacuums === 2))
      expect((yield* state("kept")).vacuums).toBe(1)
    }).pipe(withClient([])))
})
