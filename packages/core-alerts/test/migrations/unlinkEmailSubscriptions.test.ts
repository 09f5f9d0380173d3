import { PgliteClient } from "@civicstack/sql-pglite"
import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { migrate } from "../../src/migrations/index"
import { refusedBy } from "../fixtures/refusedBy"

const NOW = "2024-03-01T12:00:00Z"

describe("the email tables", () => {
  it.effect("refuse a second email for a subscriber of the same notification or digest run", () =>
    Effect.gen(function*() {
      yield* migrate
      const sql = yield* SqlClient
      yield* sql`INSERT INTO alerts.subscribers (address, created_at, updated_at) VALUES ('a@example.com', ${NOW}, ${NOW})`
      yield* sql`INSERT INTO alerts.notifications (id, tags, links, urgent, priority, created_at)
        VALUES ('00000000-0000-4000-8000-000000000001', '{}', '{}', false, 'normal', ${NOW})`
      const run = (id: string) =>
        sql`INSERT INTO alerts.digest_runs (id, frequency, window_start, window_end, created_at)
          VALUES (${id}, 'daily', ${NOW}, ${NOW}, ${NOW})`
      expect(yield* refusedBy(run("00000000-0000-4000-8000-000000000002"))).toBe("none")
      expect(yield* refusedBy(run("00000000-0000-4000-8000-000000000003"))).toBe("digest_runs_window_key")

      const email = (id: string, notificationId: string | null, digestRunId: string | null) =>
        sql`INSERT INTO alerts.emails (id, address, subject, body, status, attempts, next_attempt_at, notification_id,
            subscriber_id, digest_run_id, created_at, updated_at)
          VALUES (${id}, 'a@example.com', 'S', 'B', 'pending', 0, ${NOW}, ${notificationId}, 1, ${digestRunId}, ${NOW},
            ${NOW})`
      const notification = "00000000-0000-4000-8000-000000000001"
      const digestRun = "00000000-0000-4000-8000-000000000002"
      expect(yield* refusedBy(email("00000000-0000-4000-8000-000000000011", notification, null))).toBe("none")
      expect(yield* refusedBy(email("00000000-0000-4000-8000-000000000012", notification, null)))
        .toBe("emails_notification_subscriber_key")
      expect(yield* refusedBy(email("00000000-0000-4000-8000-000000000013", null, digestRun))).toBe("none")
      expect(yield* refusedBy(email("00000000-0000-4000-8000-000000000014", null, digestRun)))
        .toBe("emails_digest_run_subscriber_key")
      // single emails (neither) are not limited
      expect(yield* refusedBy(email("00000000-0000-4000-8000-000000000015", null, null))).toBe("none")
      expect(yield* refusedBy(email("00000000-0000-4000-8000-000000000016", null, null))).toBe("none")
    }).pipe(Effect.provide(PgliteClient.layer({}))), 60_000)
})
