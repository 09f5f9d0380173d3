/**
 * The same statements through PgliteClient and through @effect/sql-pg's
 * PgClient on a real PostgreSQL return deep-equal results. Runs only when
 * TEST_DATABASE_URL is set; the PostgreSQL side gets a database of its own.
 */
import { PgliteClient } from "@civicstack/sql-pglite"
import * as Reactivity from "@effect/experimental/Reactivity"
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type { Fragment } from "@effect/sql/Statement"
import { PgClient } from "@effect/sql-pg"
import { describe, expect, layer } from "@effect/vitest"
import { Chunk, Effect, Layer, Redacted, Stream } from "effect"
import { camelToSnake, snakeToCamel } from "effect/String"
import { randomBytes } from "node:crypto"

const databaseUrl = process.env["TEST_DATABASE_URL"]

const transforms = { transformQueryNames: camelToSnake, transformResultNames: snakeToCamel }

const temporaryDatabase = (url: string) =>
  Layer.scoped(
    PgClient.PgClient,
    Effect.gen(function*() {
      const server = yield* PgClient.make({ url: Redacted.make(url) })
      const name = `civicstack_sqlpglite_${randomBytes(6).toString("hex")}`
      yield* Effect.acquireRelease(
        server.unsafe(`CREATE DATABASE ${name}`),
        () => Effect.orDie(server.unsafe(`DROP DATABASE ${name} WITH (FORCE)`))
      )
      const databaseOfItsOwn = new URL(url)
      databaseOfItsOwn.pathname = `/${name}`
      return yield* PgClient.make({ url: Redacted.make(databaseOfItsOwn.toString()), ...transforms })
    })
  ).pipe(Layer.provide(Reactivity.layer))

type Client = SqlClient.SqlClient & { readonly json: (value: unknown) => Fragment }

const errorCode = (error: SqlError) => (error.cause as { readonly code?: unknown }).code

const instant = new Date("2024-03-10T01:02:03.456Z")

const probes: Record<string, (sql: Client) => Effect.Effect<unknown, SqlError | Migrator.MigrationError>> = {
  "result types": (sql) =>
    sql`SELECT
      9007199254740993::int8 AS big,
      12.50::numeric AS amount,
      7::int4 AS count,
      3::int2 AS small,
      1.25::float4 AS single,
      1.5::float8 AS ratio,
      true AS flag,
      '2024-05-06T07:08:09.123+02'::timestamptz AS at,
      '2024-05-06 07:08:09'::timestamp AS wall_clock,
      '2024-05-06'::date AS day,
      '12:34:56'::time AS time_of_day,
      '1 year 2 mons 3 days 04:05:06.7'::interval AS span,
      '{"a":[1,2,{"b":null}]}'::jsonb AS doc,
      '{"b":1}'::json AS plain_doc,
      '\\x0102ff'::bytea AS bytes,
      'a6f9619f-8b86-d011-b42d-00c04fc964ff'::uuid AS id,
      '(1.5,2)'::point AS spot,
      NULL::text AS nothing,
      ARRAY[1, 2]::int4[] AS ints,
      ARRAY[1, 2]::int8[] AS bigs,
      ARRAY[1.5, 2]::numeric[] AS amounts,
      ARRAY['a', 'b"c', NULL]::text[] AS texts,
      ARRAY['{"x":1}']::jsonb[] AS docs,
      ARRAY[true, false] AS flags,
      ARRAY['2024-05-06T07:08:09Z']::timestamptz[] AS instants,
      'a'::name AS a_name,
      int4range(1, 5) AS a_range`,

  "parameters": (sql) =>
    sql`SELECT
      ${instant}::timestamptz AS at,
      ${instant}::timestamp AS wall_clock,
      ${instant}::date AS day,
      ${[1, 2]}::int4[] AS ints,
      ${["a", "b,c", "d\"e", null]}::text[] AS texts,
      ${[[1, 2], [3, 4]]}::int4[] AS matrix,
      ${{ a: 1, b: [true] }}::jsonb AS object,
      ${JSON.stringify([1, 2])}::jsonb AS array_from_text,
      ${true}::bool AS flag,
      ${10n}::int8 AS big,
      ${Buffer.from([1, 2, 255])}::bytea AS bytes,
      ${new Uint8Array([9])}::bytea AS more_bytes,
      ${null}::text AS nothing,
      ${1.5}::numeric AS amount,
      ${"It's"} AS text`,

  "JSON and inserts with name transforms": (sql) =>
    Effect.gen(function*() {
      yield* sql`CREATE TABLE json_documents (document_id serial PRIMARY KEY, document_body jsonb, created_at timestamptz)`
      return yield* sql`INSERT INTO json_documents ${
        sql.insert([
          { documentBody: sql.json({ someKey: [1, { nestedKey: true }] }), createdAt: instant },
          { documentBody: { plainObject: "kept as is" }, createdAt: null }
        ])
      } RETURNING *`
    }),

  "several statements without parameters": (sql) => sql.unsafe("SELECT 1 AS first_value; SELECT 2 AS second_value;"),

  "rows as arrays": (sql) => sql`SELECT 1 AS a, 'x' AS b UNION ALL SELECT 2, 'y'`.values,

  "streams": (sql) =>
    Effect.map(
      Stream.runCollect(sql`SELECT g AS some_number, g::text AS label FROM generate_series(1, 300) g`.stream),
      Chunk.toReadonlyArray
    ),

  "errors": (sql) =>
    Effect.gen(function*() {
      yield* sql`CREATE TABLE unique_names (name text UNIQUE)`
      yield* sql`INSERT INTO unique_names VALUES ('taken')`
      return yield* Effect.forEach([
        sql`SELECT * FROM missing_relation`,
        sql`INSERT INTO unique_names VALUES (${"taken"})`,
        sql`SELECT ${sql.json([1, 2])}::jsonb`,
        sql`SELECT ${[1, 2]}::jsonb`,
        sql`SELECT 1/0`
      ], (statement) => Effect.match(statement, { onFailure: errorCode, onSuccess: () => "no error" }))
    }),

  "transactions with savepoints": (sql) =>
    Effect.gen(function*() {
      yield* sql`CREATE TABLE journal_entries (position serial, entry_text text)`
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`INSERT INTO journal_entries (entry_text) VALUES ('outer')`
        yield* Effect.ignore(sql.withTransaction(
          Effect.zipRight(sql`INSERT INTO journal_entries (entry_text) VALUES ('inner')`, Effect.fail("undo"))
        ))
        yield* sql.withTransaction(sql`INSERT INTO journal_entries (entry_text) VALUES ('kept')`)
      }))
      return yield* sql`SELECT * FROM journal_entries ORDER BY position`
    }),

  "migrations": (sql) =>
    Migrator.make({})({
      loader: Migrator.fromRecord({
        "1_first": sql`CREATE TABLE migrated_first (id int)`,
        "2_second": sql.unsafe("CREATE TABLE migrated_second (id int); CREATE INDEX ON migrated_second (id);")
      })
    }).pipe(Effect.provideService(SqlClient.SqlClient, sql))
}

describe.skipIf(databaseUrl === undefined)("PgliteClient against PostgreSQL with @effect/sql-pg", () => {
  layer(Layer.merge(PgliteClient.layer(transforms), temporaryDatabase(databaseUrl ?? "")))((it) => {
    for (const [name, probe] of Object.entries(probes)) {
      it.effect(name, () =>
        Effect.gen(function*() {
          const onPglite = yield* probe(yield* PgliteClient.PgliteClient)
          const onPostgres = yield* probe(yield* PgClient.PgClient)
          expect(onPglite).toStrictEqual(onPostgres)
        }))
    }
  })
})
