import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql/SqlClient"
import type { Layer } from "effect"
import { Duration, Effect } from "effect"
import { EmailStore } from "../../src/storage/EmailStore"
import { AlertsStore } from "../../src/storage/AlertsStore"
import { aNotification, clockAt, subscriberTo, topicList } from "../fixtures/records"

const chunk = (notificationId: string) => ({
  notificationId,
  afterSubscriberId: 0,
  throughSubscriberId: 1_000,
  unsubscribeUrlPrefix: "https://example.org/u/"
})
const content = { subject: "Tax changes", bodyBefore: "Rates change in April.\n\n".repeat(500), bodyAfter: "\n\nThe footer." }

/** Three subscribers of a list, and a notification that matched it with its content stored. */
const threeSubscribersAndANotification = Effect.gen(function*() {
  const alerts = yield* AlertsStore
  const emails = yield* EmailStore
  const tax = yield* topicList("Tax", "tax")
  for (const address of ["a@example.com", "b@example.com", "c@example.com"]) yield* subscriberTo(address, [tax.id])
  const notification = yield* alerts.insertNotification(aNotification())
  yield* emails.recordMatches(notification.id, [tax.id])
  yield* emails.storeContent(notification.id, content)
  return notification
})

const countOf = (query: Effect.Effect<ReadonlyArray<{ readonly count: unknown }>, unknown>) =>
  Effect.map(query, (found) => Number(found[0]!.count))

/** What the SQL adapter keeps in tables of its own, beyond the port's shared suite: on PGlite and PostgreSQL. */
export const sqlEmailStoreSuite = (
  name: string,
  backend: () => Layer.Layer<EmailStore | AlertsStore | SqlClient, unknown>
) =>
  describe(`the SQL email store on ${name}`, () => {
    it.effect("a fan-out stores its content in one row; each email row holds its unsubscribe lines, not the body", () =>
      Effect.provide(
        Effect.gen(function*() {
          yield* clockAt(0)
          const sql = yield* SqlClient
          const emails = yield* EmailStore
          const notification = yield* threeSubscribersAndANotification
          // one chunk per subscriber, and the content stored again as a fan-out run again does
          for (const through of [1, 2, 1_000]) {
            yield* emails.storeContent(notification.id, content)
            yield* emails.fanOutChunk({ ...chunk(notification.id), throughSubscriberId: through })
          }
          expect(yield* countOf(sql`SELECT count(*) AS count FROM alerts.notification_contents`)).toBe(1)
          expect(yield* countOf(sql`
            SELECT count(*) AS count FROM alerts.emails
            WHERE subject IS NULL AND body IS NULL AND unsubscribe_lines LIKE '[Unsubscribe from Tax](https://example.org/u/%)'`))
            .toBe(3)
          // the body is stored once, whatever the number of emails
          const bodyBytes = (yield* sql<{ readonly bytes: unknown }>`
            SELECT (SELECT COALESCE(sum(octet_length(body_before) + octet_length(body_after)), 0)
                FROM alerts.notification_contents)
              + (SELECT COALESCE(sum(octet_length(body) + octet_length(unsubscribe_lines)), 0) FROM alerts.emails) AS bytes
          `)[0]!.bytes
          expect(Number(bodyBytes)).toBeLessThan(content.bodyBefore.length + 3 * 200)
        }),
        backend()
      ))

    it.effect("emails written before migration 7, with their whole subject and body, are read and sent as they are", () =>
      Effect.provide(
        Effect.gen(function*() {
          yield* clockAt(0)
          const sql = yield* SqlClient
          const emails = yield* EmailStore
          const notification = yield* threeSubscribersAndANotification
          expect(yield* emails.fanOutChunk({ ...chunk(notification.id), throughSubscriberId: 2 })).toBe(2)
          const expected = yield* emails.emailsOfNotification(notification.id)
          // as a fan-out wrote them before migration 7: everything on the row, no content stored
          yield* sql`
            UPDATE alerts.emails e SET subject = c.subject, body = c.body_before || e.unsubscribe_lines || c.body_after,
              unsubscribe_lines = NULL
            FROM alerts.notification_contents c WHERE c.notification_id = e.notification_id`
          yield* sql`DELETE FROM alerts.notification_contents`
          expect(yield* emails.emailsOfNotification(notification.id)).toEqual(expected)

          // the rest of the notification's fan-out, resumed after the migration
          yield* emails.storeContent(notification.id, content)
          expect(yield* emails.fanOutChunk(chunk(notification.id))).toBe(1)
          const all = yield* emails.emailsOfNotification(notification.id)
          expect(all.slice(0, 2)).toEqual(expected)
          expect(all[2]!.body).toMatch(
            /^(Rates change in April\.\n\n){500}\[Unsubscribe from Tax\]\(https:\/\/example\.org\/u\/[0-9a-f-]{36}\)\n\nThe footer\.$/
          )

          const claimed = yield* emails.claim(10, Duration.minutes(1))
          expect(claimed.map(({ body, subject }) => ({ subject, tag: body._tag }))).toEqual([
            { subject: "Tax changes", tag: "Whole" },
            { subject: "Tax changes", tag: "Whole" },
            { subject: "Tax changes", tag: "AroundSharedContent" }
          ])
          expect(claimed.slice(0, 2).map((email) => email.body)).toEqual(
            expected.map((email) => ({ _tag: "Whole", text: email.body }))
          )
          expect(yield* emails.markSentMany(claimed)).toBe(3)

          yield* clockAt(8 * 24 * 60 * 60)
          expect(yield* emails.prune({ blankBodiesAfter: Duration.days(7), deleteAfter: Duration.days(28) }))
            .toEqual({ blanked: 3, deleted: 0, contentsDeleted: 0 })
          expect((yield* emails.emailsOfNotification(notification.id)).map(({ body, subject }) => ({ body, subject })))
            .toEqual(Array.from({ length: 3 }, () => ({ body: null, subject: "Tax changes" })))
        }),
        backend()
      ))

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
          yield* emails.storeContent(notification.id, { subject: "S", bodyBefore: "B", bodyAfter: "" })
          expect(yield* emails.fanOutChunk(chunk(notification.id))).toBe(2)
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
