import { PgliteClient } from "@civicstack/sql-pglite"
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { describe, expect, layer } from "@effect/vitest"
import { Chunk, Config, Deferred, Effect, Fiber, Option, Stream, TestServices } from "effect"
import { camelToSnake, snakeToCamel } from "effect/String"
import { readdirSync, readFileSync } from "node:fs"

type Row = Record<string, unknown>

/** CPU milliseconds so far of this process's threads, summed by thread name (Linux). */
const cpuMsByThreadName = () => {
  const byName = new Map<string, number>()
  for (const task of readdirSync("/proc/self/task")) {
    const name = readFileSync(`/proc/self/task/${task}/comm`, "utf8").trim()
    const stat = readFileSync(`/proc/self/task/${task}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    byName.set(name, (byName.get(name) ?? 0) + (Number(fields[11]) + Number(fields[12])) * 10)
  }
  return byName
}

const causeCode = (error: SqlError): unknown => (error.cause as { readonly code?: unknown }).code

layer(PgliteClient.layer({}))("PgliteClient (in memory)", (it) => {
  describe("transactions", () => {
    it.effect("concurrent read-modify-write transactions never interleave", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE counter (id int PRIMARY KEY, value int NOT NULL)`
        yield* sql`INSERT INTO counter VALUES (1, 0)`
        const events: Array<string> = []
        const increment = (worker: number) =>
          sql.withTransaction(Effect.gen(function*() {
            events.push(`begin ${worker}`)
            const [row] = yield* sql<{ readonly value: number }>`SELECT value FROM counter WHERE id = 1`
            yield* Effect.yieldNow()
            yield* sql`UPDATE counter SET value = ${row!.value + 1} WHERE id = 1`
            events.push(`end ${worker}`)
          }))

        yield* Effect.all(Array.from({ length: 8 }, (_, worker) => increment(worker)), {
          concurrency: "unbounded",
          discard: true
        })

        expect(yield* sql`SELECT value FROM counter WHERE id = 1`).toEqual([{ value: 8 }])
        for (let index = 0; index < events.length; index += 2) {
          expect(events[index + 1]).toBe(events[index]!.replace("begin", "end"))
        }
      }))

    it.effect("the event loop turns between the statements of a transaction, so I/O is not held up until COMMIT", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const turnsSeen = yield* sql.withTransaction(Effect.gen(function*() {
          let turns = 0
          const seen: Array<number> = []
          for (let statement = 0; statement < 3; statement++) {
            setImmediate(() => turns++)
            yield* sql`SELECT pg_sleep(0.015)`
            seen.push(turns)
          }
          return seen
        }))
        // each statement after the first began after a turn, in which the callbacks scheduled before it ran
        expect(turnsSeen[1]).toBeGreaterThanOrEqual(1)
        expect(turnsSeen[2]).toBeGreaterThanOrEqual(2)
      }))

    it.effect("a statement from another fiber waits for an open transaction and does not run inside it", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE notes (body text NOT NULL)`
        const opened = yield* Deferred.make<void>()
        const finish = yield* Deferred.make<void>()
        const transaction = yield* Effect.fork(sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO notes VALUES ('uncommitted')`
          yield* Deferred.succeed(opened, undefined)
          yield* Deferred.await(finish)
          return yield* Effect.fail("roll back" as const)
        })))
        yield* Deferred.await(opened)

        const reader = yield* Effect.fork(sql`SELECT count(*)::int AS count FROM notes`)
        const writer = yield* Effect.fork(sql`INSERT INTO notes VALUES ('outside')`)
        // Real time: PGlite answers on the event loop, which TestClock does not drive.
        const readWhileOpen = yield* TestServices.provideLive(
          Effect.timeoutOption(Fiber.join(reader), "200 millis")
        )
        expect(Option.isNone(readWhileOpen)).toBe(true)

        yield* Deferred.succeed(finish, undefined)
        expect(yield* Effect.flip(Fiber.join(transaction))).toBe("roll back")
        expect(yield* Fiber.join(reader)).toEqual([{ count: 0 }])
        yield* Fiber.join(writer)
        expect(yield* sql`SELECT body FROM notes`).toEqual([{ body: "outside" }])
      }))

    it.effect("hands the session over in arrival order, so a loop of statements cannot keep a transaction waiting", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        let transactionDone = false
        let statements = 0
        const transaction = yield* Effect.fork(sql.withTransaction(Effect.sync(() => {
          transactionDone = true
        })))
        yield* Effect.repeat(sql`SELECT 1`, { until: () => transactionDone || ++statements >= 300 })
        yield* Fiber.join(transaction)

        expect(statements).toBeLessThanOrEqual(2)
      }))

    it.effect("runs statements in the order they were sent, a transaction after those sent before its BEGIN", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE arrivals (seq serial PRIMARY KEY, sent int NOT NULL)`
        // the first statement is slow, so the next ones are sent while it runs
        const slow = yield* Effect.fork(sql`INSERT INTO arrivals (sent) SELECT 0 FROM pg_sleep(0.1)`)
        yield* Effect.yieldNow()
        const quick: Array<Fiber.RuntimeFiber<unknown, unknown>> = []
        for (let sent = 1; sent <= 20; sent++) quick.push(yield* Effect.fork(sql`INSERT INTO arrivals (sent) VALUES (${sent})`))
        yield* Effect.yieldNow()
        const seenByTransaction = yield* sql.withTransaction(
          sql<{ readonly count: number }>`SELECT count(*)::int AS count FROM arrivals`
        )
        yield* Fiber.join(slow)
        yield* Fiber.joinAll(quick)

        expect(seenByTransaction).toEqual([{ count: 21 }])
        const rows = yield* sql<{ readonly sent: number }>`SELECT sent FROM arrivals ORDER BY seq`
        expect(rows.map((row) => row.sent)).toEqual(Array.from({ length: 21 }, (_, index) => index))
      }))

    it.effect("a nested transaction is a savepoint: its rollback keeps the outer work", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE steps (position serial, name text NOT NULL)`
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO steps (name) VALUES ('outer before')`
          const inner = yield* Effect.flip(sql.withTransaction(Effect.gen(function*() {
            yield* sql`INSERT INTO steps (name) VALUES ('inner, rolled back')`
            return yield* Effect.fail("inner fails" as const)
          })))
          expect(inner).toBe("inner fails")
          yield* sql.withTransaction(sql`INSERT INTO steps (name) VALUES ('inner, kept')`)
          yield* sql`INSERT INTO steps (name) VALUES ('outer after')`
        }))

        expect(yield* sql`SELECT name FROM steps ORDER BY position`).toEqual([
          { name: "outer before" },
          { name: "inner, kept" },
          { name: "outer after" }
        ])
      }))

    it.effect("a failed transaction rolls back everything, savepoints included", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE ledger (amount int NOT NULL CHECK (amount > 0))`
        const error = yield* Effect.flip(sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO ledger VALUES (10)`
          yield* sql.withTransaction(sql`INSERT INTO ledger VALUES (20)`)
          yield* sql`INSERT INTO ledger VALUES (-1)`
        })))

        expect(error).toBeInstanceOf(SqlError)
        expect(causeCode(error)).toBe("23514")
        expect(yield* sql`SELECT amount FROM ledger`).toEqual([])
      }))
  })

  describe("the event loop", () => {
    it.effect("keeps turning while a statement runs, which runs on another thread", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        let ticks = 0
        const timer = setInterval(() => ticks++, 5)
        yield* sql`SELECT pg_sleep(0.3)`.pipe(Effect.ensuring(Effect.sync(() => clearInterval(timer))))
        expect(ticks).toBeGreaterThan(20)
      }))

    it.effect("timers and I/O run between queued statements", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        let ticks = 0
        const timer = setInterval(() => ticks++, 5)
        yield* Effect.forEach(Array.from({ length: 200 }), () => sql`SELECT pg_sleep(0.002)`, {
          concurrency: 50,
          discard: true
        }).pipe(Effect.ensuring(Effect.sync(() => clearInterval(timer))))
        expect(ticks).toBeGreaterThan(10)
      }))

    it.effect.runIf(process.platform === "linux")("the database's thread is named pglite and its CPU time is the statements' work", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const before = cpuMsByThreadName()
        yield* sql`SELECT count(*) FROM generate_series(1, 3000000)`
        const after = cpuMsByThreadName()
        const used = (name: string) => (after.get(name) ?? 0) - (before.get(name) ?? 0)
        expect(after.has("pglite")).toBe(true)
        expect(used("pglite")).toBeGreaterThanOrEqual(100)
      }))
  })

  describe("statements", () => {
    it.effect("runs text holding several statements, inside and outside transactions", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql.unsafe("CREATE TABLE multi_a (id int); CREATE TABLE multi_b (id int); INSERT INTO multi_a VALUES (1);")
        const rolledBack = sql.withTransaction(
          Effect.zipRight(sql.unsafe("CREATE TABLE multi_c (id int); INSERT INTO multi_b VALUES (2);"), Effect.fail("undo"))
        )
        yield* Effect.flip(rolledBack)

        expect(yield* sql`SELECT id FROM multi_a`).toEqual([{ id: 1 }])
        expect(yield* sql`SELECT id FROM multi_b`).toEqual([])
        expect(yield* sql`SELECT to_regclass('multi_c') AS name`).toEqual([{ name: null }])
        expect(yield* sql.unsafe("SELECT 1 AS a; SELECT 2 AS b")).toEqual([[{ a: 1 }], [{ b: 2 }]])
      }))

    it.effect("stores JSON from sql.json, from objects and from JSON text, and returns it parsed", () =>
      Effect.gen(function*() {
        const sql = yield* PgliteClient.PgliteClient
        yield* sql`CREATE TABLE documents (id int PRIMARY KEY, body jsonb NOT NULL)`
        const document = { title: "Budget", tags: ["a", "b"], nested: { count: 2, empty: null } }
        yield* sql`INSERT INTO documents ${sql.insert({ id: 1, body: sql.json(document) })}`
        yield* sql`INSERT INTO documents ${sql.insert({ id: 2, body: document })}`
        yield* sql`INSERT INTO documents VALUES (3, ${JSON.stringify([1, "two"])})`

        expect(yield* sql`SELECT id, body FROM documents ORDER BY id`).toEqual([
          { id: 1, body: document },
          { id: 2, body: document },
          { id: 3, body: [1, "two"] }
        ])
        expect(yield* sql`SELECT body->'nested'->>'count' AS count FROM documents WHERE id = 1`).toEqual([
          { count: "2" }
        ])
      }))

    it.effect("returns values typed as @effect/sql-pg (node-postgres) returns them", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<Row>`SELECT
          9007199254740993::int8 AS big,
          12.50::numeric AS amount,
          7::int4 AS count,
          3::int2 AS small,
          1.5::float8 AS ratio,
          true AS flag,
          '2024-05-06T07:08:09.123Z'::timestamptz AS at,
          '{"a":[1,2]}'::jsonb AS doc,
          '{"b":1}'::json AS plain_doc,
          '\\x0102ff'::bytea AS bytes,
          'a6f9619f-8b86-d011-b42d-00c04fc964ff'::uuid AS id,
          NULL::text AS nothing,
          ARRAY[1, 2]::int4[] AS ints,
          ARRAY[1, 2]::int8[] AS bigs,
          ARRAY['a', 'b"c']::text[] AS texts`

        expect(row).toStrictEqual({
          big: "9007199254740993",
          amount: "12.50",
          count: 7,
          small: 3,
          ratio: 1.5,
          flag: true,
          at: new Date("2024-05-06T07:08:09.123Z"),
          doc: { a: [1, 2] },
          plain_doc: { b: 1 },
          bytes: Buffer.from([1, 2, 255]),
          id: "a6f9619f-8b86-d011-b42d-00c04fc964ff",
          nothing: null,
          ints: [1, 2],
          bigs: ["1", "2"],
          texts: ["a", "b\"c"]
        })
      }))

    it.effect("binds Date, array, bytes and bigint parameters", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE events (at timestamptz NOT NULL, tags text[] NOT NULL, payload bytea NOT NULL, size int8)`
        const at = new Date("2024-02-29T23:59:58.250Z")
        yield* sql`INSERT INTO events ${
          sql.insert({ at, tags: ["x", "y,z", "quote\"d"], payload: new Uint8Array([0, 7, 255]), size: 5n })
        }`

        expect(yield* sql`SELECT * FROM events`).toStrictEqual([{
          at,
          tags: ["x", "y,z", "quote\"d"],
          payload: Buffer.from([0, 7, 255]),
          size: "5"
        }])
        expect(yield* sql`SELECT ${at}::timestamptz = '2024-02-29 23:59:58.25+00' AS same`).toEqual([{ same: true }])
      }))

    it.effect("fails with a SqlError carrying Postgres's message and error", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const error = yield* Effect.flip(sql`SELECT * FROM missing_table WHERE id = ${1}`)

        expect(error).toBeInstanceOf(SqlError)
        expect(error.message).toContain("relation \"missing_table\" does not exist")
        expect(causeCode(error)).toBe("42P01")
      }))

    it.effect("returns rows as arrays with .values and the driver's result with .raw", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE tallies (n int)`
        yield* sql`INSERT INTO tallies SELECT generate_series(1, 3)`

        expect(yield* sql`SELECT n, n * 2 AS double FROM tallies ORDER BY n`.values).toEqual([[1, 2], [2, 4], [3, 6]])
        const raw = yield* sql`UPDATE tallies SET n = n + 10 WHERE n > ${1}`.raw
        expect(raw).toMatchObject({ command: "UPDATE", affectedRows: 2 })
      }))
  })

  describe("streams", () => {
    it.effect("streams every row in order, in batches", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const rows = yield* Stream.runCollect(sql`SELECT g AS n FROM generate_series(1, ${300}) g ORDER BY g`.stream)

        expect(Chunk.toReadonlyArray(rows)).toEqual(Array.from({ length: 300 }, (_, index) => ({ n: index + 1 })))
      }))

    it.effect("leaves the session free between batches, so the consumer can run statements", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE sources (n int)`
        yield* sql`CREATE TABLE copies (n int)`
        yield* sql`INSERT INTO sources SELECT generate_series(1, 200)`

        yield* sql<{ readonly n: number }>`SELECT n FROM sources`.stream.pipe(
          Stream.mapEffect((row) => sql.withTransaction(sql`INSERT INTO copies VALUES (${row.n})`)),
          Stream.runDrain
        )

        expect(yield* sql`SELECT count(*)::int AS count FROM copies`).toEqual([{ count: 200 }])
      }))

    it.effect("inside a transaction sees the transaction's rows", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE drafts (n int)`
        const seen = yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO drafts SELECT generate_series(1, 150)`
          const rows = yield* Stream.runCollect(sql`SELECT n FROM drafts ORDER BY n`.stream)
          return yield* Effect.fail(Chunk.size(rows))
        })).pipe(Effect.flip)

        expect(seen).toBe(150)
        expect(yield* sql`SELECT count(*)::int AS count FROM drafts`).toEqual([{ count: 0 }])
      }))

    it.effect("streams the rows returned by a statement that changes data", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE tickets (id serial, holder text)`
        const rows = yield* Stream.runCollect(
          sql`INSERT INTO tickets ${sql.insert([{ holder: "ann" }, { holder: "bo" }])} RETURNING id, holder`.stream
        )

        expect(Chunk.toReadonlyArray(rows)).toEqual([{ id: 1, holder: "ann" }, { id: 2, holder: "bo" }])
      }))
  })

  it.effect("runs @effect/sql migrations, including multi-statement ones, once", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const migrate = Migrator.make({})({
        loader: Migrator.fromRecord({
          "1_create_authors": sql`CREATE TABLE authors (id serial PRIMARY KEY, name text NOT NULL)`,
          "2_create_books": sql.unsafe(
            "CREATE TABLE books (id serial PRIMARY KEY, author_id int REFERENCES authors); CREATE INDEX ON books (author_id);"
          )
        })
      })

      expect(yield* migrate).toEqual([[1, "create_authors"], [2, "create_books"]])
      expect(yield* migrate).toEqual([])
      expect(yield* sql`SELECT to_regclass('books') IS NOT NULL AS present`).toEqual([{ present: true }])
    }))
})

const withNameTransforms = PgliteClient.layerConfig({
  transformQueryNames: Config.succeed(camelToSnake),
  transformResultNames: Config.succeed(snakeToCamel)
})

layer(withNameTransforms)(
  "PgliteClient with name transforms, from a Config",
  (it) => {
    it.effect("transforms names in statements, rows, streams and JSON as @effect/sql-pg does", () =>
      Effect.gen(function*() {
        const sql = yield* PgliteClient.PgliteClient
        yield* sql`CREATE TABLE ${sql("auditEntries")} (created_by text, details jsonb)`
        yield* sql`INSERT INTO ${sql("auditEntries")} ${
          sql.insert({ createdBy: "ann", details: sql.json({ changedField: "title" }) })
        }`

        const expected = [{ createdBy: "ann", details: { changedField: "title" } }]
        expect(yield* sql`SELECT * FROM audit_entries`).toEqual(expected)
        expect(Chunk.toReadonlyArray(yield* Stream.runCollect(sql`SELECT * FROM audit_entries`.stream))).toEqual(
          expected
        )
        expect(yield* sql.withoutTransforms()`SELECT * FROM audit_entries`).toEqual([
          { created_by: "ann", details: { changed_field: "title" } }
        ])
      }))
  }
)

layer(PgliteClient.layer({ threadHeapLimitMb: 64 }))("PgliteClient whose thread runs out of memory", (it) => {
  it.effect("fails every statement after, and `failure` says why, while a working client's `failure` waits", () =>
    Effect.gen(function*() {
      const sql = yield* PgliteClient.PgliteClient
      expect(Option.isNone(yield* TestServices.provideLive(Effect.timeoutOption(sql.failure, "50 millis")))).toBe(true)

      // About 640 MB of rows, far past the thread's 64 MB heap.
      const tooLarge = yield* Effect.flip(sql`SELECT repeat(md5(i::text), 100) FROM generate_series(1, 200000) AS i`)
      expect(tooLarge.message).toMatch(/memory/)

      const failure = yield* Effect.flip(sql.failure)
      expect(failure.message).toMatch(/^PGlite stopped: .*memory/)
      const after = yield* Effect.flip(sql`SELECT 1`)
      expect(after.message).toMatch(/memory/)
    }))
})
