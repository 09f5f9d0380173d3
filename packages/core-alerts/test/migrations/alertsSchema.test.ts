import { PgliteClient } from "@civicstack/sql-pglite"
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql/SqlClient"
import type { Layer } from "effect"
import { Effect } from "effect"
import { suiteOnPostgres, testPool } from "@civicstack/kit/testing"
import { migrate } from "../../src/migrations/index"
import { refusedBy } from "../fixtures/refusedBy"

const NOW = "2024-03-01T12:00:00Z"

const migrationSuite = (name: string, makeDatabase: () => Layer.Layer<SqlClient, unknown>) =>
  describe(`the alerts schema on ${name}`, () => {
    it.effect("can be migrated twice, and its unique indexes hold whatever writes to it", () =>
      Effect.gen(function*() {
        yield* migrate
        yield* migrate
        const sql = yield* SqlClient
        const list = (slug: string, digest: string) =>
          sql`INSERT INTO alerts.subscriber_lists (title, slug, criteria_digest, tags, links, document_type,
            email_document_supertype, government_document_supertype, created_at, updated_at)
            VALUES ('T', ${slug}, ${digest}, '{}', '{}', '', '', '', ${NOW}, ${NOW})`
        expect(yield* refusedBy(list("tax", "d1"))).toBe("none")
        expect(yield* refusedBy(list("tax", "d2"))).toBe("subscriber_lists_slug_key")
        expect(yield* refusedBy(list("vat", "d1"))).toBe("subscriber_lists_criteria_digest_key")

        const subscriber = (address: string) =>
          sql`INSERT INTO alerts.subscribers (address, created_at, updated_at) VALUES (${address}, ${NOW}, ${NOW})`
        expect(yield* refusedBy(subscriber("Ada@example.com"))).toBe("none")
        expect(yield* refusedBy(subscriber("ada@EXAMPLE.com"))).toBe("subscribers_by_address")

        const subscription = (id: string, ended: boolean) =>
          sql`INSERT INTO alerts.subscriptions (id, subscriber_id, subscriber_list_id, frequency, source, ended_at,
              ended_reason, created_at, updated_at)
            VALUES (${id}, 1, 1, 'daily', 'imported', ${ended ? NOW : null}, ${ended ? "unsubscribed" : null}, ${NOW}, ${NOW})`
        expect(yield* refusedBy(subscription("00000000-0000-4000-8000-000000000001", false))).toBe("none")
        expect(yield* refusedBy(subscription("00000000-0000-4000-8000-000000000002", false))).toBe("subscriptions_one_active")
        expect(yield* refusedBy(subscription("00000000-0000-4000-8000-000000000003", true))).toBe("none")
        expect(yield* refusedBy(subscription("00000000-0000-4000-8000-000000000004", true))).toBe("none")

        const notification = (id: string, basePath: string | null) =>
          sql`INSERT INTO alerts.notifications (id, tags, links, content_id, base_path, public_updated_at, urgent,
              priority, created_at)
            VALUES (${id}, '{}', '{}', 'c-1', ${basePath}, ${NOW}, false, 'normal', ${NOW})`
        expect(yield* refusedBy(notification("00000000-0000-4000-8000-000000000011", "/tax"))).toBe("none")
        expect(yield* refusedBy(notification("00000000-0000-4000-8000-000000000012", "/tax"))).toBe("notifications_content_change")
        expect(yield* refusedBy(notification("00000000-0000-4000-8000-000000000013", null))).toBe("none")
        expect(yield* refusedBy(notification("00000000-0000-4000-8000-000000000014", null))).toBe("none")
      }).pipe(Effect.provide(makeDatabase())), 60_000)
  })

migrationSuite("PGlite", () => PgliteClient.layer({}))

// a database of its own, left unmigrated: the tests apply the migrations themselves
suiteOnPostgres("alertsmigrate", Effect.void, testPool, migrationSuite)
