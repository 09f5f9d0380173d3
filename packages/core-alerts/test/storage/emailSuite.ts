import { describe, expect, it } from "@effect/vitest"
import type { Layer } from "effect"
import { Duration, Effect, Option } from "effect"
import type { DeliveryReport } from "../../src/domain/deliveryStatus"
import type { FanOutChunk } from "../../src/storage/EmailStore"
import { EmailStore } from "../../src/storage/EmailStore"
import { unsubscribeLine } from "../../src/domain/bodyParts"
import { immediateEmailBody } from "../../src/domain/compose"
import { AlertsStore } from "../../src/storage/AlertsStore"
import { aNotification, at, clockAt, start, subscriberTo, topicList } from "../fixtures/records"

const content = {
  subject: "Tax changes",
  bodyBefore: "Rates change in April.\n\n",
  bodyAfter: "\n\nThe footer.",
  unsubscribeUrlPrefix: "https://example.org/email/unsubscribe/"
}
const { unsubscribeUrlPrefix, ...sharedContent } = content
const chunk = (notificationId: string, afterSubscriberId = 0, throughSubscriberId = 1_000_000): FanOutChunk => ({
  notificationId,
  afterSubscriberId,
  throughSubscriberId,
  unsubscribeUrlPrefix
})
const lease = Duration.seconds(60)
const retention = { blankBodiesAfter: Duration.days(7), deleteAfter: Duration.days(28) }

/** A notification tagged `tax`, recorded with the lists it matched, and its emails' shared content stored. */
const recordedNotification = Effect.gen(function*() {
  const alerts = yield* AlertsStore
  const emails = yield* EmailStore
  const notification = yield* alerts.insertNotification(aNotification())
  yield* emails.recordMatches(notification.id, yield* alerts.matchingListIds(notification))
  yield* emails.storeContent(notification.id, sharedContent)
  return notification
})

const singleEmail = (address = "ada@example.com") =>
  Effect.flatMap(EmailStore, (emails) => emails.queueEmail({ address, subject: "Confirm", body: "Click." }))

/** The behaviour every adapter of `EmailStore` shares: run against memory, PGlite and PostgreSQL. */
export const emailStoreSuite = (
  name: string,
  backend: () => Layer.Layer<EmailStore | AlertsStore, unknown>
) =>
  describe(`EmailStore on ${name}`, () => {
    const test = (title: string, body: Effect.Effect<void, unknown, EmailStore | AlertsStore>) =>
      it.effect(title, () => Effect.provide(Effect.zipRight(clockAt(0), body), backend()))

    describe("fan-out", () => {
      test("one email per subscriber, listing each matching immediate subscription by list title", Effect.gen(function*() {
        const emails = yield* EmailStore
        const vat = yield* topicList("VAT [rates]", "tax", "vat")
        const tax = yield* topicList("Income tax", "tax")
        const other = yield* topicList("Farming", "farming")
        const both = yield* subscriberTo("both@example.com", [vat.id, tax.id, other.id])
        const one = yield* subscriberTo("one@example.com", [tax.id])
        yield* subscriberTo("daily@example.com", [tax.id], "daily")
        yield* subscriberTo("farmer@example.com", [other.id])
        const notification = yield* recordedNotification

        expect(yield* emails.fanOutChunk(chunk(notification.id))).toBe(2)

        const created = yield* emails.emailsOfNotification(notification.id)
        expect(created.map((email) => email.address)).toEqual(["both@example.com", "one@example.com"])
        const [taxSubscription, vatSubscription] = [both.subscriptions[1]!, both.subscriptions[0]!]
        const link = (title: string, id: string) => unsubscribeLine(title, `${content.unsubscribeUrlPrefix}${id}`)
        expect(created[0]).toMatchObject({
          subject: "Tax changes",
          body: `Rates change in April.\n\n${link("Income tax", taxSubscription.id)}\n\n` +
            `${link("VAT [rates]", vatSubscription.id)}\n\nThe footer.`,
          status: "pending",
          attempts: 0,
          notificationId: notification.id,
          subscriberId: both.subscriber.id,
          digestRunId: null,
          subscriptionIds: [taxSubscription.id, vatSubscription.id].sort(),
          createdAt: start
        })
        expect(created[0]!.body).toContain("[Unsubscribe from VAT \\[rates\\]](https://example.org/email/unsubscribe/")
        expect(created[1]).toMatchObject({ subscriberId: one.subscriber.id, subscriptionIds: [one.subscriptions[0]!.id] })
      }))

      test("a list's title stays inside its unsubscribe link: line breaks become spaces, brackets are escaped", Effect.gen(function*() {
        const emails = yield* EmailStore
        const hostile = yield* topicList("Tax\nhttps://evil.example/\r\n<https://evil.example> [x](y)", "tax")
        const subscriber = yield* subscriberTo("one@example.com", [hostile.id])
        const notification = yield* recordedNotification
        yield* emails.fanOutChunk(chunk(notification.id))
        const [email] = yield* emails.emailsOfNotification(notification.id)
        const line = `[Unsubscribe from Tax https://evil.example/  \\<https://evil.example\\> \\[x\\](y)](${content.unsubscribeUrlPrefix}${subscriber.subscriptions[0]!.id})`
        expect(email!.body).toBe(`Rates change in April.\n\n${line}\n\nThe footer.`)
      }))

      test("a notification that matched one list: an email per immediate subscriber of that list", Effect.gen(function*() {
        const emails = yield* EmailStore
        const tax = yield* topicList("Tax [rates]", "tax")
        const farming = yield* topicList("Farming", "farming")
        const both = yield* subscriberTo("both@example.com", [farming.id, tax.id])
        yield* subscriberTo("daily@example.com", [tax.id], "daily")
        yield* subscriberTo("farmer@example.com", [farming.id])
        const one = yield* subscriberTo("one@example.com", [tax.id])
        const notification = yield* recordedNotification

        expect(yield* emails.fanOutChunk(chunk(notification.id))).toBe(2)

        const created = yield* emails.emailsOfNotification(notification.id)
        const link = (id: string) => unsubscribeLine("Tax [rates]", `${content.unsubscribeUrlPrefix}${id}`)
        expect(created.map(({ address, body, subscriptionIds }) => ({ address, body, subscriptionIds }))).toEqual([
          {
            address: "both@example.com",
            body: `Rates change in April.\n\n${link(both.subscriptions[1]!.id)}\n\nThe footer.`,
            subscriptionIds: [both.subscriptions[1]!.id]
          },
          {
            address: "one@example.com",
            body: `Rates change in April.\n\n${link(one.subscriptions[0]!.id)}\n\nThe footer.`,
            subscriptionIds: [one.subscriptions[0]!.id]
          }
        ])
        expect(created[0]!.body).toContain("[Unsubscribe from Tax \\[rates\\]](https://example.org/email/unsubscribe/")
        const [claimed] = yield* emails.claim(1, lease)
        expect(claimed!.subscriptionIds).toEqual([both.subscriptions[1]!.id])
      }))

      test("reprocessing creates nothing, and chunks reach only their id range", Effect.gen(function*() {
        const emails = yield* EmailStore
        const tax = yield* topicList("Tax", "tax")
        const first = yield* subscriberTo("a@example.com", [tax.id])
        const second = yield* subscriberTo("b@example.com", [tax.id])
        const third = yield* subscriberTo("c@example.com", [tax.id])
        const notification = yield* recordedNotification
        yield* emails.recordMatches(notification.id, [tax.id])

        expect(yield* emails.fanOutChunk(chunk(notification.id, 0, first.subscriber.id))).toBe(1)
        expect(yield* emails.fanOutChunk(chunk(notification.id, 0, second.subscriber.id))).toBe(1)
        expect(yield* emails.fanOutChunk(chunk(notification.id))).toBe(1)
        expect(yield* emails.fanOutChunk(chunk(notification.id))).toBe(0)
        const created = yield* emails.emailsOfNotification(notification.id)
        expect(created.map((email) => email.subscriberId)).toEqual(
          [first, second, third].map(({ subscriber }) => subscriber.id)
        )
      }))

      test("the range of subscribers a fan-out walks: those with an active immediate subscription to a matched list", Effect.gen(function*() {
        const alerts = yield* AlertsStore
        const emails = yield* EmailStore
        const tax = yield* topicList("Tax", "tax")
        const other = yield* topicList("Other", "other")
        yield* subscriberTo("before@example.com", [other.id])
        const first = yield* subscriberTo("first@example.com", [tax.id])
        yield* subscriberTo("daily@example.com", [tax.id], "daily")
        const last = yield* subscriberTo("last@example.com", [tax.id])
        const ended = yield* subscriberTo("ended@example.com", [tax.id])
        yield* alerts.endSubscription(ended.subscriptions[0]!.id, "unsubscribed")
        yield* subscriberTo("after@example.com", [other.id])
        const unmatched = yield* alerts.insertNotification(aNotification({ tags: new Map([["topics", ["nothing"]]]) }))
        yield* emails.recordMatches(unmatched.id, [])

        const notification = yield* recordedNotification
        expect(yield* emails.immediateSubscriberRange(notification.id))
          .toEqual(Option.some({ lowest: first.subscriber.id, highest: last.subscriber.id }))
        expect(yield* emails.immediateSubscriberRange(unmatched.id)).toEqual(Option.none())
        expect(yield* emails.immediateSubscriberRange("not-a-notification")).toEqual(Option.none())
      }))

      test("ended subscriptions, deactivated subscribers and unrecorded matches get nothing", Effect.gen(function*() {
        const alerts = yield* AlertsStore
        const emails = yield* EmailStore
        const tax = yield* topicList("Tax", "tax")
        const ended = yield* subscriberTo("ended@example.com", [tax.id])
        yield* alerts.subscribe({
          subscriberId: ended.subscriber.id,
          subscriberListId: (yield* topicList("Other", "other")).id,
          frequency: "immediately",
          source: "user_signed_up"
        })
        yield* alerts.endSubscription(ended.subscriptions[0]!.id, "unsubscribed")
        const gone = yield* subscriberTo("gone@example.com", [tax.id])
        yield* alerts.deactivateSubscriber(gone.subscriber.id, "non_existent_email")
        const unmatched = yield* alerts.insertNotification(aNotification())
        expect(yield* emails.fanOutChunk(chunk(unmatched.id))).toBe(0)

        const notification = yield* recordedNotification
        expect(yield* emails.fanOutChunk(chunk(notification.id))).toBe(0)
        expect(yield* emails.highestSubscriberId).toBe(gone.subscriber.id)
      }))

      test("the content is stored once per notification; its emails hold their unsubscribe lines and refer to it", Effect.gen(function*() {
        const alerts = yield* AlertsStore
        const emails = yield* EmailStore
        const tax = yield* topicList("Tax", "tax")
        const reached = yield* Effect.forEach(["a", "b", "c"], (name) => subscriberTo(`${name}@example.com`, [tax.id]))
        const notification = yield* alerts.insertNotification(aNotification())
        yield* emails.recordMatches(notification.id, [tax.id])
        // no content stored yet: no email could say anything
        expect(yield* emails.fanOutChunk(chunk(notification.id))).toBe(0)

        yield* emails.storeContent(notification.id, sharedContent)
        expect(yield* emails.fanOutChunk(chunk(notification.id, 0, reached[0]!.subscriber.id))).toBe(1)
        // a fan-out run again keeps the content its first emails were written with
        yield* emails.storeContent(notification.id, { ...sharedContent, subject: "Changed", bodyBefore: "Changed.\n\n" })
        expect(yield* emails.fanOutChunk(chunk(notification.id))).toBe(2)

        expect(yield* emails.contentsOf([notification.id, notification.id, "not-a-uuid"])).toEqual(
          new Map([[notification.id, sharedContent]])
        )
        expect(yield* emails.contentsOf(["00000000-0000-4000-8000-000000000000"])).toEqual(new Map())
        const stored = yield* emails.emailsOfNotification(notification.id)
        const lineOf = ({ subscriptions }: typeof reached[number]) =>
          unsubscribeLine("Tax", `${unsubscribeUrlPrefix}${subscriptions[0]!.id}`)
        expect(stored.map(({ body, subject }) => ({ subject, body }))).toEqual(
          reached.map((subscriber) => ({ subject: "Tax changes", body: immediateEmailBody(sharedContent, lineOf(subscriber)) }))
        )

        // what delivery gets: each email's own lines, to put inside the content it reads once
        const claimed = yield* emails.claim(10, lease)
        expect(claimed.map(({ address, body, subject }) => ({ address, subject, body }))).toEqual(
          reached.map((subscriber) => ({
            address: subscriber.subscriber.address,
            subject: "Tax changes",
            body: { _tag: "AroundSharedContent", notificationId: notification.id, unsubscribeLines: lineOf(subscriber) }
          }))
        )
      }))

      test("reads back a recorded notification", Effect.gen(function*() {
        const alerts = yield* AlertsStore
        const emails = yield* EmailStore
        const recorded = yield* alerts.insertNotification(aNotification({
          title: "VAT",
          basePath: "/vat",
          links: new Map([["taxons", ["t-1", "t-2"]]]),
          publicUpdatedAt: at(-60),
          priority: "high"
        }))
        expect(yield* emails.notification(recorded.id)).toEqual(Option.some(recorded))
        expect(yield* emails.notification("00000000-0000-4000-8000-000000000000")).toEqual(Option.none())
        expect(yield* emails.notification("not-a-uuid")).toEqual(Option.none())
      }))
    })

    describe("delivery", () => {
      test("claims due emails once, oldest first, up to the limit; a sent email is not claimed again", Effect.gen(function*() {
        const emails = yield* EmailStore
        const first = yield* singleEmail("first@example.com")
        yield* clockAt(1)
        const second = yield* singleEmail("second@example.com")
        yield* singleEmail("third@example.com")

        const claimed = yield* emails.claim(2, lease)
        const body = { _tag: "Whole", text: "Click." }
        expect(claimed).toEqual([
          { id: first, address: "first@example.com", subject: "Confirm", body, attempt: 1, subscriptionIds: [] },
          { id: second, address: "second@example.com", subject: "Confirm", body, attempt: 1, subscriptionIds: [] }
        ])
        expect((yield* emails.claim(10, lease)).map((email) => email.address)).toEqual(["third@example.com"])
        expect(yield* emails.claim(10, lease)).toEqual([])

        yield* clockAt(2)
        expect(yield* emails.markSent(claimed[0]!)).toBe(true)
        expect(yield* emails.email(first)).toEqual(Option.some(expect.objectContaining({
          status: "sent",
          attempts: 1,
          sentAt: at(2)
        })))
        yield* clockAt(1000)
        expect((yield* emails.claim(10, lease)).map((email) => email.id)).not.toContain(first)
      }))

      test("workers claiming at the same time get different emails", Effect.gen(function*() {
        const emails = yield* EmailStore
        const queued = yield* Effect.forEach(Array.from({ length: 30 }, (_, i) => `reader${i}@example.com`), singleEmail)
        const claims = yield* Effect.all(
          Array.from({ length: 4 }, () => emails.claim(10, lease)),
          { concurrency: "unbounded" }
        )
        const claimed = claims.flat().map((email) => email.id)
        expect(claimed).toHaveLength(30)
        expect(new Set(claimed).size).toBe(30)
        expect([...claimed].sort()).toEqual([...queued].sort())
      }))

      test("an expired lease lets another worker claim it; the stale claim then changes nothing", Effect.gen(function*() {
        const emails = yield* EmailStore
        const id = yield* singleEmail()
        const [crashed] = yield* emails.claim(10, lease)
        yield* clockAt(59)
        expect(yield* emails.claim(10, lease)).toEqual([])
        yield* clockAt(60)
        const [again] = yield* emails.claim(10, lease)
        expect(again).toMatchObject({ id, attempt: 2 })
        expect(yield* emails.markSent(crashed!)).toBe(false)
        expect(yield* emails.markPermanentFailure(crashed!, "late")).toBe(false)
        expect(yield* emails.markTemporaryFailure(crashed!, { reason: "late", retryAt: at(61), maxAttempts: 5 }))
          .toBe("lost")
        expect(yield* emails.markSent(again!)).toBe(true)
      }))

      test("marks many claims sent in one call; claims that no longer hold change nothing", Effect.gen(function*() {
        const emails = yield* EmailStore
        const first = yield* singleEmail("first@example.com")
        const second = yield* singleEmail("second@example.com")
        const third = yield* singleEmail("third@example.com")
        const [stale] = yield* emails.claim(1, lease)
        expect(stale).toMatchObject({ id: first, attempt: 1 })
        yield* clockAt(30)
        const rest = yield* emails.claim(10, lease)
        expect(rest.map((email) => email.id)).toEqual([second, third])
        yield* clockAt(60)
        const [again] = yield* emails.claim(10, lease)
        expect(again).toMatchObject({ id: first, attempt: 2 })
        const claimed = [stale!, ...rest]

        yield* clockAt(61)
        expect(yield* emails.markSentMany([])).toBe(0)
        expect(yield* emails.markSentMany(claimed)).toBe(2)
        for (const id of [second, third]) {
          expect(yield* emails.email(id)).toEqual(Option.some(expect.objectContaining({
            status: "sent",
            attempts: 1,
            sentAt: at(61)
          })))
        }
        expect(yield* emails.email(first)).toEqual(Option.some(expect.objectContaining({
          status: "sending",
          attempts: 2,
          sentAt: null
        })))
        // marking again changes nothing; the current claim still settles
        expect(yield* emails.markSentMany(claimed)).toBe(0)
        expect(yield* emails.markSentMany([again!])).toBe(1)
        yield* clockAt(1000)
        expect(yield* emails.claim(10, lease)).toEqual([])
      }))

      test("expiring every claim makes the claimed emails due at once; the old claims then change nothing", Effect.gen(function*() {
        const emails = yield* EmailStore
        const first = yield* singleEmail()
        const second = yield* singleEmail()
        const claimed = yield* emails.claim(1, lease)
        yield* clockAt(10)
        expect(yield* emails.claim(10, lease)).toHaveLength(1)
        expect(yield* emails.claim(10, lease)).toEqual([])
        expect(yield* emails.expireClaims).toBe(2)
        expect(yield* emails.expireClaims).toBe(0)
        const again = yield* emails.claim(10, lease)
        expect(again.map((email) => email.id).sort()).toEqual([first, second].sort())
        expect(again.map((email) => email.attempt)).toEqual([2, 2])
        expect(yield* emails.markSent(claimed[0]!)).toBe(false)
      }))

      test("a temporary failure waits until its retry time; the last attempt fails for good", Effect.gen(function*() {
        const emails = yield* EmailStore
        const id = yield* singleEmail()
        const [first] = yield* emails.claim(10, lease)
        expect(yield* emails.markTemporaryFailure(first!, { reason: "busy", retryAt: at(30), maxAttempts: 2 }))
          .toBe("retrying")
        expect(yield* emails.email(id)).toEqual(Option.some(expect.objectContaining({
          status: "pending",
          attempts: 1,
          nextAttemptAt: at(30),
          failureReason: "busy"
        })))
        yield* clockAt(29)
        expect(yield* emails.claim(10, lease)).toEqual([])
        yield* clockAt(30)
        const [second] = yield* emails.claim(10, lease)
        expect(second).toMatchObject({ id, attempt: 2 })
        expect(yield* emails.markTemporaryFailure(second!, { reason: "still busy", retryAt: at(90), maxAttempts: 2 }))
          .toBe("failed")
        expect(yield* emails.email(id)).toEqual(Option.some(expect.objectContaining({
          status: "failed",
          failureReason: "still busy"
        })))
        yield* clockAt(1000)
        expect(yield* emails.claim(10, lease)).toEqual([])
      }))

      test("a permanent failure is final; a released email is due at once without counting the attempt", Effect.gen(function*() {
        const emails = yield* EmailStore
        const refused = yield* singleEmail("refused@example.com")
        const handedBack = yield* singleEmail("back@example.com")
        const claimed = yield* emails.claim(10, lease)
        const claimOf = (id: string) => claimed.find((email) => email.id === id)!
        expect(yield* emails.markPermanentFailure(claimOf(refused), "no such mailbox")).toBe(true)
        yield* emails.release([claimOf(handedBack)])
        expect(yield* emails.email(refused)).toEqual(Option.some(expect.objectContaining({
          status: "failed",
          failureReason: "no such mailbox"
        })))
        const again = yield* emails.claim(10, lease)
        expect(again).toEqual([expect.objectContaining({ id: handedBack, attempt: 1 })])
      }))

      test("figures count waiting emails and date the oldest pending one", Effect.gen(function*() {
        const emails = yield* EmailStore
        expect(yield* emails.figures).toEqual({ waiting: 0, oldestImmediatePendingSince: null })
        yield* singleEmail("a@example.com")
        yield* clockAt(10)
        yield* singleEmail("b@example.com")
        yield* singleEmail("c@example.com")
        expect(yield* emails.figures).toEqual({ waiting: 3, oldestImmediatePendingSince: at(0) })
        const [oldest, next] = yield* emails.claim(2, lease)
        expect(yield* emails.figures).toEqual({ waiting: 3, oldestImmediatePendingSince: at(10) })
        yield* emails.markSent(oldest!)
        yield* emails.markPermanentFailure(next!, "refused")
        expect(yield* emails.figures).toEqual({ waiting: 1, oldestImmediatePendingSince: at(10) })
      }))

      test("counts the single emails of a subject sent to an address lately, whatever became of them", Effect.gen(function*() {
        const emails = yield* EmailStore
        expect(yield* emails.singleEmailsSince("a@example.com", "Confirm", at(-1))).toEqual({ count: 0, oldest: null })
        yield* singleEmail("a@example.com")
        yield* clockAt(10)
        yield* singleEmail("a@example.com")
        yield* singleEmail("b@example.com")
        yield* emails.queueEmail({ address: "a@example.com", subject: "Other", body: "x" })
        const [first] = yield* emails.claim(1, lease)
        yield* emails.markSent(first!)
        expect(yield* emails.singleEmailsSince("a@example.com", "Confirm", at(-1))).toEqual({ count: 2, oldest: at(0) })
        expect(yield* emails.singleEmailsSince("a@example.com", "Confirm", at(0))).toEqual({ count: 1, oldest: at(10) })
        expect(yield* emails.singleEmailsSince("c@example.com", "Confirm", at(-1))).toEqual({ count: 0, oldest: null })
      }))

      test("status figures count emails by status and date the oldest pending one, digests included", Effect.gen(function*() {
        const emails = yield* EmailStore
        const none = { pending: 0, sending: 0, sent: 0, failed: 0 }
        expect(yield* emails.statusFigures).toEqual({ counts: none, oldestPendingSince: null })
        const ada = yield* subscriberTo("ada@example.com", [(yield* topicList("Tax", "tax")).id], "daily")
        const run = yield* emails.startDigestRun({ frequency: "daily", start: at(-3600), end: at(0) })
        yield* emails.insertDigestEmails(run.id, [{
          subscriberId: ada.subscriber.id,
          address: "ada@example.com",
          subject: "Your daily update",
          body: "One update.",
          subscriptionIds: ada.subscriptions.map((subscription) => subscription.id)
        }])
        yield* clockAt(10)
        for (const address of ["a@example.com", "b@example.com", "c@example.com", "d@example.com"]) {
          yield* singleEmail(address)
        }
        expect(yield* emails.statusFigures).toEqual({ counts: { ...none, pending: 5 }, oldestPendingSince: at(0) })
        const [digest, sent, failed] = yield* emails.claim(3, lease)
        yield* emails.markSent(sent!)
        yield* emails.markPermanentFailure(failed!, "refused")
        expect(digest!.address).toBe("ada@example.com")
        expect(yield* emails.statusFigures).toEqual({
          counts: { pending: 2, sending: 1, sent: 1, failed: 1 },
          oldestPendingSince: at(10)
        })
      }))
    })

    describe("digests", () => {
      const window = { frequency: "daily" as const, start: at(-3600), end: at(3600) }

      test("one run per frequency and window end; completing it is recorded", Effect.gen(function*() {
        const emails = yield* EmailStore
        const run = yield* emails.startDigestRun(window)
        expect(run).toMatchObject({ ...window, completedAt: null })
        expect(yield* emails.startDigestRun(window)).toEqual(run)
        const weekly = yield* emails.startDigestRun({ ...window, frequency: "weekly" })
        expect(weekly.id).not.toBe(run.id)
        yield* clockAt(5)
        yield* emails.completeDigestRun(run.id)
        expect(yield* emails.startDigestRun(window)).toEqual({ ...run, completedAt: at(5) })
      }))

      test("entries pair the window's matched notifications with active subscriptions at its frequency", Effect.gen(function*() {
        const alerts = yield* AlertsStore
        const emails = yield* EmailStore
        const tax = yield* topicList("Tax", "tax")
        const vat = yield* topicList("VAT", "tax", "vat")
        const daily = yield* subscriberTo("daily@example.com", [tax.id, vat.id], "daily")
        yield* subscriberTo("weekly@example.com", [tax.id], "weekly")
        yield* subscriberTo("now@example.com", [tax.id])
        const ended = yield* subscriberTo("ended@example.com", [tax.id], "daily")
        yield* alerts.deactivateSubscriber(ended.subscriber.id, "unsubscribed")
        yield* clockAt(-3601)
        const before = yield* recordedNotification
        yield* clockAt(-3600)
        const first = yield* recordedNotification
        yield* clockAt(3599)
        const last = yield* recordedNotification
        yield* clockAt(3600)
        yield* recordedNotification
        const unmatched = yield* alerts.insertNotification(aNotification({ tags: new Map() }))

        expect((yield* emails.notificationsIn(window)).map((n) => n.id)).toEqual([first.id, last.id])
        expect(before.id).not.toBe(first.id)
        const entries = yield* emails.digestEntries(window, { afterSubscriberId: 0, throughSubscriberId: 100 })
        const key = (entry: { readonly subscriptionId: string; readonly notificationId: string }) =>
          `${entry.subscriptionId} ${entry.notificationId}`
        expect(entries.map(key).sort()).toEqual(
          daily.subscriptions.flatMap((subscription) =>
            [first, last].map((n) => key({ subscriptionId: subscription.id, notificationId: n.id }))
          ).sort()
        )
        expect(entries[0]).toMatchObject({ subscriberId: daily.subscriber.id, address: "daily@example.com" })
        expect(entries.map((entry) => entry.listTitle).sort()).toEqual(["Tax", "Tax", "VAT", "VAT"])
        expect(yield* emails.digestEntries(window, { afterSubscriberId: daily.subscriber.id, throughSubscriberId: 100 }))
          .toEqual([])
        expect(unmatched.id).toBeDefined()
      }))

      test("the runs to resume: every one not completed, and the latest", Effect.gen(function*() {
        const emails = yield* EmailStore
        const day = (n: number) => ({ frequency: "daily" as const, start: at(n * 86_400), end: at((n + 1) * 86_400) })
        expect(yield* emails.digestRunsToResume("daily")).toEqual([])
        const first = yield* emails.startDigestRun(day(0))
        const stopped = yield* emails.startDigestRun(day(1))
        const latest = yield* emails.startDigestRun(day(2))
        yield* emails.startDigestRun({ frequency: "weekly", start: at(0), end: at(7 * 86_400) })
        yield* emails.completeDigestRun(first.id)
        yield* emails.completeDigestRun(latest.id)
        const resume = yield* emails.digestRunsToResume("daily")
        expect(resume.map((run) => [run.id, run.start, run.end])).toEqual([
          [stopped.id, day(1).start, day(1).end],
          [latest.id, day(2).start, day(2).end]
        ])
        expect(resume[1]!.completedAt).not.toBeNull()
      }))

      test("a digest run writes one email per subscriber, however often it is asked", Effect.gen(function*() {
        const emails = yield* EmailStore
        const tax = yield* topicList("Tax", "tax")
        const vat = yield* topicList("VAT", "tax", "vat")
        const ada = yield* subscriberTo("ada@example.com", [tax.id, vat.id], "daily")
        const run = yield* emails.startDigestRun(window)
        const digest = {
          subscriberId: ada.subscriber.id,
          address: "ada@example.com",
          subject: "Your daily update",
          body: "Two updates.",
          subscriptionIds: ada.subscriptions.map((subscription) => subscription.id)
        }
        expect(yield* emails.insertDigestEmails(run.id, [digest])).toBe(1)
        expect(yield* emails.insertDigestEmails(run.id, [{ ...digest, body: "Again." }])).toBe(0)
        expect(yield* emails.insertDigestEmails(run.id, [])).toBe(0)
        const written = yield* emails.emailsOfDigestRun(run.id)
        expect(written).toEqual([expect.objectContaining({
          address: "ada@example.com",
          subject: "Your daily update",
          body: "Two updates.",
          status: "pending",
          digestRunId: run.id,
          notificationId: null,
          subscriberId: ada.subscriber.id,
          subscriptionIds: [...digest.subscriptionIds].sort()
        })])
        // digests do not count as immediate emails in the queue's age
        expect(yield* emails.figures).toEqual({ waiting: 1, oldestImmediatePendingSince: null })
      }))
    })

    test("retention deletes a notification's content once no email refers to it, and content no fan-out used for a week", Effect.gen(function*() {
      const alerts = yield* AlertsStore
      const emails = yield* EmailStore
      const tax = yield* topicList("Tax", "tax")
      yield* subscriberTo("a@example.com", [tax.id])
      yield* subscriberTo("b@example.com", [tax.id])
      const notification = yield* recordedNotification
      yield* emails.fanOutChunk(chunk(notification.id))
      const [sent, waiting] = yield* emails.claim(10, lease)
      yield* emails.markSent(sent!)
      yield* emails.release([waiting!])
      // matched no immediate subscriber: its content is used by no email
      const unused = yield* alerts.insertNotification(aNotification())
      yield* emails.storeContent(unused.id, sharedContent)
      const day = 24 * 60 * 60

      yield* clockAt(7 * day - 1)
      // a fan-out of it starting again now would still find its content
      yield* emails.storeContent(unused.id, sharedContent)
      yield* clockAt(7 * day + 1)
      expect(yield* emails.prune(retention)).toEqual({ blanked: 1, deleted: 0, contentsDeleted: 0 })
      yield* clockAt(14 * day)
      expect(yield* emails.prune(retention)).toEqual({ blanked: 0, deleted: 0, contentsDeleted: 1 })
      expect(yield* emails.contentsOf([unused.id])).toEqual(new Map())

      yield* clockAt(28 * day + 1)
      expect(yield* emails.prune(retention)).toEqual({ blanked: 0, deleted: 1, contentsDeleted: 0 })
      // the pending email still says what it said
      const [left] = yield* emails.emailsOfNotification(notification.id)
      expect(left).toMatchObject({ id: waiting!.id, status: "pending", subject: "Tax changes" })
      expect(left!.body).toContain("Rates change in April.\n\n[Unsubscribe from Tax](")
      const [claimedAgain] = yield* emails.claim(10, lease)
      yield* emails.markPermanentFailure(claimedAgain!, "refused")
      yield* clockAt(28 * day + 2)
      expect(yield* emails.prune(retention)).toEqual({ blanked: 0, deleted: 1, contentsDeleted: 1 })
      expect(yield* emails.contentsOf([notification.id])).toEqual(new Map())
    }))

    test("retention blanks bodies after a week and deletes finished emails after four; pending ones stay", Effect.gen(function*() {
      const emails = yield* EmailStore
      const tax = yield* topicList("Tax", "tax")
      yield* subscriberTo("a@example.com", [tax.id])
      const notification = yield* recordedNotification
      yield* emails.fanOutChunk(chunk(notification.id))
      const [fannedOut] = yield* emails.emailsOfNotification(notification.id)
      const sent = yield* singleEmail("sent@example.com")
      const failed = yield* singleEmail("failed@example.com")
      const claimed = yield* emails.claim(10, lease)
      for (const email of claimed) {
        if (email.id === failed) yield* emails.markPermanentFailure(email, "refused")
        else yield* emails.markSent(email)
      }
      yield* clockAt(60)
      const pending = yield* singleEmail("pending@example.com")
      const day = 24 * 60 * 60

      yield* clockAt(7 * day - 1)
      expect(yield* emails.prune(retention)).toEqual({ blanked: 0, deleted: 0, contentsDeleted: 0 })
      yield* clockAt(7 * day + 1)
      expect(yield* emails.prune(retention)).toEqual({ blanked: 3, deleted: 0, contentsDeleted: 0 })
      expect(yield* emails.email(sent)).toEqual(Option.some(expect.objectContaining({ body: null, status: "sent" })))
      // blanked, it still has its subject
      expect(yield* emails.email(fannedOut!.id)).toEqual(Option.some(expect.objectContaining({
        body: null,
        subject: "Tax changes"
      })))

      yield* clockAt(28 * day + 1)
      expect(yield* emails.prune(retention)).toEqual({ blanked: 0, deleted: 3, contentsDeleted: 1 })
      expect(yield* emails.email(sent)).toEqual(Option.none())
      expect(yield* emails.email(failed)).toEqual(Option.none())
      expect(yield* emails.emailsOfNotification(notification.id)).toEqual([])
      expect(yield* emails.email(pending)).toEqual(Option.some(expect.objectContaining({ body: "Click." })))
      // fan-out after retention would send again; the unique key is gone with the row, as the retention period intends
    }))

    describe("delivery reports", () => {
      const report = (emailId: string, overrides: Partial<DeliveryReport> = {}): DeliveryReport => ({
        emailId,
        address: "Ada@Example.com",
        source: "notify",
        providerId: "740e5834-3a29-46b4-9a6f-16142fde533a",
        status: "permanent-failure",
        detail: null,
        reportedAt: at(30),
        ...overrides
      })

      test("are kept with their email once each, matched by id and address", Effect.gen(function*() {
        const emails = yield* EmailStore
        const id = yield* singleEmail("ada@example.com")
        yield* clockAt(60)
        expect(yield* emails.recordDeliveryReport(report(id, { status: "temporary-failure" }))).toBe("recorded")
        expect(yield* emails.recordDeliveryReport(report(id, { status: "temporary-failure" }))).toBe("repeated")
        yield* clockAt(61)
        expect(yield* emails.recordDeliveryReport(report(id, { source: "bounce", providerId: "<dsn@mx>", detail: "5.1.1" })))
          .toBe("recorded")
        expect(yield* emails.deliveryReportsOf(id)).toEqual([
          {
            source: "notify",
            providerId: "740e5834-3a29-46b4-9a6f-16142fde533a",
            status: "temporary-failure",
            detail: null,
            reportedAt: at(30),
            receivedAt: at(60)
          },
          { source: "bounce", providerId: "<dsn@mx>", status: "permanent-failure", detail: "5.1.1", reportedAt: at(30), receivedAt: at(61) }
        ])
      }))

      test("change nothing for an unknown email, or an address that is not the email's", Effect.gen(function*() {
        const emails = yield* EmailStore
        const id = yield* singleEmail("ada@example.com")
        expect(yield* emails.recordDeliveryReport(report(id, { address: "grace@example.com" }))).toBe("unknown")
        expect(yield* emails.recordDeliveryReport(report("1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed"))).toBe("unknown")
        expect(yield* emails.recordDeliveryReport(report("not-an-email-id"))).toBe("unknown")
        expect(yield* emails.deliveryReportsOf(id)).toEqual([])
        expect(yield* emails.deliveryReportsOf("not-an-email-id")).toEqual([])
      }))
    })
  })
