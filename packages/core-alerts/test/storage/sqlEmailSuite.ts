import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql/SqlClient"
import type { Layer } from "effect"
import { Duration, Effect } from "effect"
import { EmailStore } from "../../src/storage/EmailStore"
import { AlertsStore } from "../../src/storage/AlertsStore"
import { aNotification, clockAt, subscriberTo, topicList } from "../fixtures/records"

/** What the SQL adapter keeps in tables of its own, beyond the port's shared suite: on PGlite and PostgreSQL. */
export const sqlEmailStoreSuite = (
  name: string,
  backend: () => Layer.Layer<EmailStore | AlertsStore | SqlClient, unknown>
) =>
  describe(`the SQL email store on ${name}`, () => {
    it.effect("emails written before migration 4 are read with the links they kept, which retention deletes with the email", () =>
      Effect.provide(
        Effect.gen(function*() {
          yield* clockAt(0)
          const sql = yield* SqlClient
          const alerts = yield* AlertsStore
          const emails = yield* EmailStore
          const tax = yield* topicList("Tax", "tax")
          const ada = yield* subscriberTo("a@example.com", [tax.id])
          const bob = yield* subscriberTo("b@example.com", [tax.id])
          const notification = yield* alerts.insertNotification(aNotification())
          yield* emails.recordMatches(notification.id, yield* alerts.matchingListIds(notification))
          expect(yield* emails.fanOutChunk({
            notificationId: notification.id,
            afterSubscriberId: 0,
            throughSubscriberId: 1_000,
            content: { subject: "S", bodyBefore: "B", bodyAfter: "", unsubscribeUrlPrefix: "https://example.org/u/" }
          })).toBe(2)
          const links = sql<{ readonly count: unknown }>`SELECT count(*) AS count FROM alerts.email_subscriptions`
          expect(Number((yield* links)[0]!.count)).toBe(0)
          // as the emails of a fan-out before migration 4: no subscription ids on the row, one link per subscription
          yield* sql`UPDATE alerts.emails SET subscription_ids = NULL`
          yield* sql`
            INSERT INTO alerts.email_subscriptions (email_id, subscription_id)
            SELECT e.id, s.id FROM alerts.emails e JOIN alerts.subscriptions s ON s.subscriber_id = e.subscriber_id`
          expect(Number((yield* links)[0]!.count)).toBe(2)
          expect((yield* emails.emailsOfNotification(notification.id)).map((email) => email.subscriptionIds)).toEqual([
            [ada.subscriptions[0]!.id],
            [bob.subscriptions[0]!.id]
          ])
          const claimed = yield* emails.claim(1, Duration.minutes(1))
          expect(claimed.map((email) => email.subscriptionIds)).toEqual([[ada.subscriptions[0]!.id]])
          expect(yield* emails.markSentMany(claimed)).toBe(1)

          yield* clockAt(29 * 24 * 60 * 60)
          expect(yield* emails.prune({ blankBodiesAfter: Duration.days(7), deleteAfter: Duration.days(28) }))
            .toMatchObject({ deleted: 1 })
          expect(Number((yield* links)[0]!.count)).toBe(1)
          const [left] = yield* emails.emailsOfNotification(notification.id)
          expect(left!.subscriptionIds).toEqual([bob.subscriptions[0]!.id])
        }),
        backend()
      ))
  })
