import { migrateSchema } from "@civicstack/kit"
import { suiteOnPostgres, testPool } from "@civicstack/kit/testing"
import { PgliteClient } from "@civicstack/sql-pglite"
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql/SqlClient"
import type { Layer } from "effect"
import { Duration, Effect, Option, TestClock } from "effect"
import { alertsMigrations, alertsSchema, migrate } from "../../src/migrations/index"
import { EmailStore } from "../../src/storage/EmailStore"
import { layerSql } from "../../src/storage/sql"

const NOW = "2024-03-01T12:00:00Z"
const NOTIFICATION = "00000000-0000-4000-8000-000000000001"
const EMAIL = "00000000-0000-4000-8000-000000000002"
const SUBSCRIPTION = "00000000-0000-4000-8000-000000000003"
const BODY = "Rates change in April.\n\n[Unsubscribe from Tax](https://example.org/u/00000000-0000-4000-8000-000000000003)"

/** The alerts schema as it was before migration 7 (same schema and lock, so `migrate` carries on from it). */
const migrateToFive = migrateSchema({
  ...alertsSchema,
  migrations: Object.fromEntries(Object.entries(alertsMigrations).filter(([name]) => parseInt(name, 10) <= 5))
})

const migrationSuite = (name: string, makeDatabase: () => Layer.Layer<SqlClient, unknown>) =>
  describe(`migration 7 on ${name}`, () => {
    it.effect("a fan-out's email written before it, with its whole subject and body, is sent as it was written", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(new Date(NOW).getTime())
        yield* migrateToFive
        const sql = yield* SqlClient
        yield* sql`INSERT INTO alerts.notifications (id, subject, body, tags, links, urgent, priority, created_at)
          VALUES (${NOTIFICATION}, 'Tax changes', 'Rates change in April.', '{}', '{}', false, 'normal', ${NOW})`
        yield* sql`INSERT INTO alerts.emails (id, address, subject, body, status, attempts, next_attempt_at,
            notification_id, subscriber_id, subscription_ids, created_at, updated_at)
          VALUES (${EMAIL}, 'a@example.com', 'Tax changes', ${BODY}, 'pending', 0, ${NOW}, ${NOTIFICATION}, 1,
            ${SUBSCRIPTION}, ${NOW}, ${NOW})`

        yield* migrate
        yield* Effect.gen(function*() {
          const emails = yield* EmailStore
          expect(Option.getOrThrow(yield* emails.email(EMAIL))).toMatchObject({ subject: "Tax changes", body: BODY })
          const [claimed] = yield* emails.claim(10, Duration.minutes(1))
          expect(claimed).toEqual({
            id: EMAIL,
            address: "a@example.com",
            subject: "Tax changes",
            body: { _tag: "Whole", text: BODY },
            attempt: 1,
            subscriptionIds: [SUBSCRIPTION]
          })
        }).pipe(Effect.provide(layerSql()))
      }).pipe(Effect.provide(makeDatabase())), 60_000)
  })

migrationSuite("PGlite", () => PgliteClient.layer({}))

// a database of its own, left unmigrated: the test applies the migrations itself
suiteOnPostgres("alertscontentonce", Effect.void, testPool, migrationSuite)
