import { migrateSchema } from "@civicstack/kit"
import { PgliteClient } from "@civicstack/sql-pglite"
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql/SqlClient"
import type { Layer } from "effect"
import { Effect, Option } from "effect"
import { randomBytes } from "node:crypto"
import { suiteOnPostgres, testPool } from "@civicstack/kit/testing"
import {
  createLinkcheckTables,
  indexClaimedChecksByHost,
  indexWaitingChecksByHost
} from "../../src/migrations/createLinkcheckTables"
import { migrate } from "../../src/migrations/index"
import { LinkcheckStore } from "../../src/storage/LinkcheckStore"
import { layerSql } from "../../src/storage/sql"
import { batchReportJson } from "../../src/storage/reportJson"

/** The schema as it was before checks were indexed by hashes. */
const migrateBeforeHashes = migrateSchema({
  schema: "linkcheck",
  lockKey: 5_463_118_920,
  migrations: {
    "1_create_linkcheck": createLinkcheckTables,
    "2_index_waiting_checks_by_host": indexWaitingChecksByHost,
    "3_index_claimed_checks_by_host": indexClaimedChecksByHost
  }
})

const start = new Date("2024-03-01T12:00:00.000Z")
const at = (seconds: number) => new Date(start.getTime() + seconds * 1000)

/** The key of the per-host limit that the store of those days wrote: the URL's host with its port. */
const hostKeyOfThoseDays = (uri: string) => new URL(uri).host.toLowerCase()

/** Checks written by the store before the migration: one completed, one held by a worker, two waiting. */
const checksOfTheOldSchema = Effect.flatMap(SqlClient, (sql) => {
  const row = (uri: string, fields: Record<string, unknown>) => ({ uri, host: hostKeyOfThoseDays(uri), ...fields })
  const rows = [
    row("https://done.example/", { completed_at: at(1), status: "ok", errors: [], warnings: [], danger: [] }),
    row("https://busy.example/held", { claimed_by: "worker-x", claimed_until: at(3600) }),
    row("https://busy.example/waiting", {}),
    row("https://ünïcode.example/ça", {})
  ]
  return sql<{ id: string; uri: string }>`
    INSERT INTO linkcheck.checks (uri, host, priority, created_at, completed_at, status, errors, warnings, danger,
      claimed_by, claimed_until, attempts)
    SELECT r.uri, r.host, 1, ${start.toISOString()}::timestamptz, r.completed_at, r.status, r.errors, r.warnings,
      r.danger, r.claimed_by, r.claimed_until, 0
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS r(uri text, host text, completed_at timestamptz,
      status text, errors jsonb, warnings jsonb, danger jsonb, claimed_by text, claimed_until timestamptz)
    RETURNING id::text AS id, uri
  `
})

const migrationSuite = (name: string, makeDatabase: () => Layer.Layer<SqlClient, unknown>) =>
  describe(`the migration to hashed indexes on ${name}`, () => {
    it.effect("keeps existing checks findable, reusable and limited per host", () =>
      Effect.gen(function*() {
        yield* migrateBeforeHashes
        const old = yield* checksOfTheOldSchema
        const idOf = (uri: string) => old.find((row) => row.uri === uri)!.id
        yield* migrate

        const store = yield* LinkcheckStore
        const done = yield* store.findCheck("https://done.example/", { since: start, completedOnly: true })
        expect(Option.map(done, (check) => check.id)).toEqual(Option.some(idOf("https://done.example/")))
        const batch = yield* store.createBatch({
          uris: [
            "https://ünïcode.example/ça",
            "https://done.example/",
            "https://new.example/",
            "https://busy.example/new"
          ],
          priority: "high",
          reuseSince: start,
          webhook: null,
          now: at(10)
        })
        expect(batch.checks.slice(0, 2).map((check) => check.id)).toEqual([
          idOf("https://ünïcode.example/ça"),
          idOf("https://done.example/")
        ])

        const claimed = yield* store.claimChecks({
          workerId: "worker-a",
          now: at(10),
          claimUntil: at(70),
          limit: 10,
          perHost: 1,
          aheadPerHost: 0,
          heldByHost: new Map(),
          lowPriorityQuota: 0,
          workersAliveSince: at(0)
        })
        // busy.example is at its limit with the check worker-x held before the migration
        expect(claimed.map((check) => check.uri).sort()).toEqual(["https://new.example/", "https://ünïcode.example/ça"])

        const longUri = `https://busy.example/${randomBytes(2000).toString("base64url")}`
        const check = yield* store.createCheck({ uri: longUri, priority: "high", now: at(20) })
        expect(yield* store.findCheck(longUri, { since: start, completedOnly: false })).toEqual(Option.some(check))
      }).pipe(Effect.provide(layerSql()), Effect.provide(makeDatabase())), 60_000)

    it.effect("a check completed before link reports were stored is reported as one completed after", () =>
      Effect.gen(function*() {
        yield* migrate
        const sql = yield* SqlClient
        const store = yield* LinkcheckStore
        const batch = yield* store.createBatch({
          uris: ["https://reports.example/before", "https://reports.example/after"],
          priority: "high",
          reuseSince: null,
          webhook: { uri: "https://hooks.example/reports", secretToken: null },
          now: at(0)
        })
        yield* store.claimChecks({
          workerId: "worker-r",
          now: at(1),
          claimUntil: at(61),
          limit: 10,
          perHost: 10,
          aheadPerHost: 0,
          heldByHost: new Map(),
          lowPriorityQuota: 0,
          workersAliveSince: at(0)
        })
        yield* store.completeChecks({
          workerId: "worker-r",
          now: at(2.5),
          results: batch.checks.map((check) => ({
            id: check.id,
            result: {
              status: "broken",
              errors: ["Gone \"away\""],
              warnings: [],
              danger: [],
              problemSummary: "Gone",
              suggestedFix: null
            }
          }))
        })
        const stored = yield* sql<{ stored: boolean }>`
          SELECT link_report IS NOT NULL AS stored FROM linkcheck.checks WHERE id = ${batch.checks[1]!.id}::bigint`
        expect(stored[0]!.stored).toBe(true)
        // as the migration leaves the checks completed before it
        yield* sql`UPDATE linkcheck.checks SET link_report = NULL WHERE id = ${batch.checks[0]!.id}::bigint`

        const found = Option.getOrThrow(yield* store.findWebhookReport(batch.id))
        const record = Option.getOrThrow(yield* store.findBatch(batch.id))
        expect(JSON.parse(found.reportJson)).toEqual(JSON.parse(batchReportJson(record)))
        const links = JSON.parse(found.reportJson).links
        expect(links[0]).toEqual({ ...links[1], uri: "https://reports.example/before" })
      }).pipe(Effect.provide(layerSql()), Effect.provide(makeDatabase())), 60_000)

    it.effect("without the links' foreign keys, deleting old batches still deletes their links and nothing else", () =>
      Effect.gen(function*() {
        yield* migrate
        const sql = yield* SqlClient
        const store = yield* LinkcheckStore
        const newBatch = (uris: ReadonlyArray<string>) =>
          store.createBatch({ uris, priority: "high", reuseSince: null, webhook: null, now: at(0) })
        const old = yield* newBatch(["https://links.example/old", "https://links.example/waiting"])
        const kept = yield* newBatch(["https://links.example/waiting", "https://links.example/kept"])
        // completed long before the other test's checks, which share the PostgreSQL database
        yield* sql`UPDATE linkcheck.checks SET completed_at = ${at(-86_400).toISOString()}::timestamptz, status = 'ok'
          WHERE id = ${old.checks[0]!.id}::bigint`
        const linksOf = (batchId: number) =>
          Effect.map(
            sql<{ count: number }>`SELECT count(*)::integer AS count FROM linkcheck.batch_links WHERE batch_id = ${batchId}`,
            (rows) => rows[0]!.count
          )

        expect(yield* store.deleteCompletedBefore(at(-3600))).toEqual({ checks: 1, batches: 1 })
        expect(yield* linksOf(old.id)).toBe(0)
        expect(yield* linksOf(kept.id)).toBe(2)
      }).pipe(Effect.provide(layerSql()), Effect.provide(makeDatabase())), 60_000)
  })

migrationSuite("PGlite", () => PgliteClient.layer({}))

// a database of its own, left unmigrated: the tests apply the migrations themselves
suiteOnPostgres("lcmigrate", Effect.void, testPool, migrationSuite)
