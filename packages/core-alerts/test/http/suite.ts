import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Redacted, TestClock } from "effect"
import { jwtVerify } from "jose"
import { fanOutJob } from "../../src/domain/jobs"
import { AlertsParts } from "../../src/services/AlertsParts"
import type { AlertsSettings } from "../../src/settings"
import { RecordingEmailQueue } from "../fixtures/recordingEmailQueue"
import type { ServiceBackend } from "../fixtures/backends"
import { baseUrl, servedOver } from "./server"

const NOW = new Date("2026-03-02T09:30:00.000Z")
const SECRET = "a test secret that is long enough for HS256 0123456789"
const SITE = "https://www.example.org"
const SETTINGS: Partial<AlertsSettings> = {
  publicSiteUrl: SITE,
  authTokenSecret: Redacted.make(SECRET),
  authTokenIssuer: "alerts-under-test"
}

interface Answer {
  readonly status: number
  readonly contentType: string | null
  readonly retryAfter: string | null
  readonly text: string
  // answers are checked field by field; `any` keeps those assertions readable
  readonly body: any
}

type Send = (method: string, path: string, body?: unknown) => Effect.Effect<Answer>

/** A body given as `{ raw: text }` is sent as it is; any other is sent as JSON. */
const sender = (url: string): Send => (method, path, body) =>
  Effect.promise(async () => {
    const raw = typeof body === "object" && body !== null && "raw" in body ? String((body as { raw: unknown }).raw) : undefined
    const init: RequestInit = body === undefined
      ? { method }
      : { method, headers: { "content-type": "application/json" }, body: raw ?? JSON.stringify(body) }
    const response = await fetch(`${url}${path}`, init)
    const text = await response.text()
    let parsed: unknown = undefined
    try {
      parsed = text === "" ? undefined : JSON.parse(text)
    } catch {
      parsed = undefined
    }
    return {
      status: response.status,
      contentType: response.headers.get("content-type"),
      retryAfter: response.headers.get("retry-after"),
      text,
      body: parsed
    }
  })

const post = (send: Send, path: string, body?: unknown) => send("POST", path, body)

/** Everything a request could change, read through the store's, job queue's and email queue's own interfaces. */
const snapshot = Effect.gen(function*() {
  const { jobs, store } = yield* AlertsParts
  const ids = Array.from({ length: 8 }, (_, n) => n + 1)
  return {
    lists: yield* Effect.forEach(ids, (id) => store.listById(id)),
    subscribers: yield* Effect.forEach(ids, (id) => store.subscriberById(id)),
    subscriptions: yield* Effect.forEach(ids, (id) => store.activeSubscriptionsOf(id)),
    jobs: yield* jobs.stats,
    emails: yield* Effect.flatMap(RecordingEmailQueue, (recording) => recording.queued)
  }
}).pipe(Effect.orDie)

const fanOutJobs = Effect.gen(function*() {
  const { jobs } = yield* AlertsParts
  const claimed = yield* jobs.claim({
    queue: fanOutJob.queue,
    workerId: "test",
    limit: 100,
    leaseDuration: Duration.minutes(1)
  })
  return claimed.map((job) => job.payload as { notificationId: string })
}).pipe(Effect.orDie)

const queuedJobCount = Effect.gen(function*() {
  const { jobs } = yield* AlertsParts
  const stats = yield* jobs.stats
  return stats.filter((queue) => queue.queue === fanOutJob.queue).reduce((sum, queue) => sum + queue.queued, 0)
}).pipe(Effect.orDie)

const expectEnvelope = (answer: Answer, status: number) => {
  expect(answer.status).toBe(status)
  expect(answer.contentType).toContain("application/json")
  expect(typeof answer.body?.error).toBe("string")
}

/** Answers `status` in the envelope, its details naming each of `fields`, with every record as it was. */
const expectRefused = (send: () => Effect.Effect<Answer>, status: number, fields: ReadonlyArray<string> = []) =>
  Effect.gen(function*() {
    const before = yield* snapshot
    const answer = yield* send()
    expectEnvelope(answer, status)
    for (const field of fields) {
      expect(answer.body.details, JSON.stringify(answer.body)).toHaveProperty([field])
      expect(answer.body.error).toContain(field)
    }
    expect(yield* snapshot).toEqual(before)
    return answer
  })

const GUIDES = { title: "Guides", tags: { format: ["guide"], topics: ["tax", "benefits"] } }
const NEWS = { title: "News", links: { organisations: { all: ["org-1", "org-2"] } }, document_type: "news_story" }

export const alertsHttpSuite = (name: string, backend: ServiceBackend) =>
  describe(`the email alert API over HTTP (${name})`, () => {
    /** The handlers served over a fresh service, with the clock at NOW. */
    const served = <A>(body: (send: Send) => Effect.Effect<A, unknown, AlertsParts | RecordingEmailQueue>) =>
      Effect.gen(function*() {
        yield* TestClock.setTime(NOW.getTime())
        return yield* body(sender(yield* baseUrl))
      }).pipe(Effect.scoped, Effect.provide(servedOver(backend(SETTINGS))))

    /** A subscriber with an immediate subscription to each of the lists: their ids and subscription ids. */
    const subscribed = (send: Send, address: string, ...lists: Array<number>) =>
      Effect.forEach(lists, (listId) =>
        Effect.map(post(send, "/subscriptions", { address, subscriber_list_id: listId }), (answer) => {
          expect(answer.status).toBe(201)
          return answer.body.subscription as { id: string; subscriber_id: number }
        }))

    describe("subscriber lists", () => {
      it.effect("POST /subscriber-lists creates a list (201), then finds it by its criteria in any order (200, title updated)", () =>
        served((send) =>
          Effect.gen(function*() {
            const created = yield* post(send, "/subscriber-lists", GUIDES)
            expect(created.status).toBe(201)
            expect(created.contentType).toBe("application/json; charset=utf-8")
            expect(created.body.subscriber_list).toEqual({
              id: 1,
              title: "Guides",
              slug: "guides",
              subscription_url: `${SITE}/email/subscriptions/new?topic_id=guides`,
              external_delivery_id: "guides",
              document_type: "",
              email_document_supertype: "",
              government_document_supertype: "",
              tags: { format: ["guide"], topics: ["benefits", "tax"] },
              links: {},
              content_id: null,
              created_at: NOW.toISOString(),
              updated_at: NOW.toISOString()
            })

            yield* TestClock.adjust("1 hour")
            const found = yield* post(send, "/subscriber-lists", {
              title: "Guides, renamed",
              tags: { topics: { any: ["benefits", "tax", "tax"] }, format: ["guide"] }
            })
            expect(found.status).toBe(200)
            expect(found.body.subscriber_list).toMatchObject({ id: 1, title: "Guides, renamed", slug: "guides" })
            expect(found.body.subscriber_list.updated_at).toBe(new Date(NOW.getTime() + 3_600_000).toISOString())

            const another = yield* post(send, "/subscriber-lists", { title: "Guides", tags: { format: ["guide"] } })
            expect(another.status).toBe(201)
            expect(another.body.subscriber_list).toMatchObject({ id: 2, slug: "guides-2" })

            const news = yield* post(send, "/subscriber-lists", NEWS)
            expect(news.status).toBe(201)
            expect(news.body.subscriber_list).toMatchObject({
              links: { organisations: { all: ["org-1", "org-2"] } },
              document_type: "news_story"
            })
          })
        ))

      it.effect("POST /subscriber-lists refuses a wrong criterion or nothing to match on (422) and a missing title (400)", () =>
        served((send) =>
          Effect.gen(function*() {
            expect((yield* post(send, "/subscriber-lists", GUIDES)).status).toBe(201)
            yield* expectRefused(() => post(send, "/subscriber-lists", { title: "T", tags: { format: "guide" } }), 422, ["tags.format"])
            yield* expectRefused(() => post(send, "/subscriber-lists", { title: "T", tags: { format: { some: ["x"] } } }), 422, ["tags.format"])
            yield* expectRefused(() => post(send, "/subscriber-lists", { title: "T", tags: { format: [] } }), 422, ["tags.format"])
            yield* expectRefused(() => post(send, "/subscriber-lists", { title: "T" }), 422, ["tags"])
            yield* expectRefused(() => post(send, "/subscriber-lists", { title: "T", tags: {}, links: {} }), 422, ["tags"])
            yield* expectRefused(() => post(send, "/subscriber-lists", { tags: { format: ["guide"] } }), 400, ["title"])
            const both = yield* expectRefused(
              () => post(send, "/subscriber-lists", { title: 7, tags: { format: "guide" }, document_type: ["x"] }),
              422,
              ["title", "tags.format", "document_type"]
            )
            expect(Object.keys(both.body.details).sort()).toEqual(["document_type", "tags.format", "title"])
          })
        ))

      it.effect("GET /subscriber-lists finds the list with exactly these criteria, in every bracket form", () =>
        served((send) =>
          Effect.gen(function*() {
            yield* post(send, "/subscriber-lists", GUIDES)
            yield* post(send, "/subscriber-lists", NEWS)
            const byTags = yield* send("GET", "/subscriber-lists?tags[topics][]=tax&tags[format][]=guide&tags[topics][]=benefits")
            expect(byTags.status).toBe(200)
            expect(byTags.body.subscriber_list).toMatchObject({ id: 1, title: "Guides" })
            const byAny = yield* send("GET", "/subscriber-lists?tags[format][any][]=guide&tags[topics][any][]=benefits&tags[topics][any][]=tax")
            expect(byAny.body.subscriber_list.id).toBe(1)
            const byLinks = yield* send(
              "GET",
              "/subscriber-lists?links[organisations][all][]=org-2&links[organisations][all][]=org-1&document_type=news_story"
            )
            expect(byLinks.status).toBe(200)
            expect(byLinks.body.subscriber_list.id).toBe(2)

            const subset = yield* send("GET", "/subscriber-lists?tags[format][]=guide")
            expect(subset.status).toBe(404)
            expect(subset.body).toEqual({ error: "Could not find the subscriber list" })
            const anyForAll = yield* send("GET", "/subscriber-lists?links[organisations][]=org-1&links[organisations][]=org-2&document_type=news_story")
            expect(anyForAll.status).toBe(404)
            expect((yield* send("GET", "/subscriber-lists")).status).toBe(404)
          })
        ))

      it.effect("GET /subscriber-lists with hostile or malformed bracket queries answers 4xx and changes nothing", () =>
        served((send) =>
          Effect.gen(function*() {
            yield* post(send, "/subscriber-lists", GUIDES)
            const before = yield* snapshot
            const polluted = yield* send("GET", "/subscriber-lists?tags[__proto__][]=x&tags[constructor][all][]=y")
            expect(polluted.status).toBe(404)
            expect(({} as Record<string, unknown>)["0"]).toBeUndefined()
            expect(Object.prototype).not.toHaveProperty("x")
            for (
              const query of [
                "tags[format][some][]=guide",
                "tags[]=guide",
                "tags[format][all][]=a&tags[format][]=b",
                "document_type=a&document_type=b",
                "tags[format][]=%00",
                "tags=guide"
              ]
            ) {
              const answer = yield* send("GET", `/subscriber-lists?${query}`)
              expect(answer.status, query).toBe(400)
              expectEnvelope(answer, 400)
            }
            expect(yield* snapshot).toEqual(before)
          })
        ))

      it.effect("GET /subscriber-lists/{slug} answers the list, 404 for an unknown slug", () =>
        served((send) =>
          Effect.gen(function*() {
            yield* post(send, "/subscriber-lists", GUIDES)
            const found = yield* send("GET", "/subscriber-lists/guides")
            expect(found.status).toBe(200)
            expect(found.body.subscriber_list).toMatchObject({ id: 1, slug: "guides" })
            for (const slug of ["nothing-here", "GUIDES", "%00"]) {
              const missing = yield* send("GET", `/subscriber-lists/${slug}`)
              expect(missing.status, slug).toBe(404)
              expect(missing.body, slug).toEqual({ error: "Could not find the subscriber list" })
            }
          })
        ))
    })

    describe("notifications", () => {
      it.effect("POST /notifications and POST /content-changes answer 202 and enqueue one fan-out job each", () =>
        served((send) =>
          Effect.gen(function*() {
            const first = yield* post(send, "/notifications", { subject: "New guide", body: "Read it", tags: { format: ["guide"] } })
            expect(first.status).toBe(202)
            expect(first.body).toEqual({ message: "Notification queued for sending" })
            const second = yield* post(send, "/content-changes", { title: "A change", content_id: "c-1", base_path: "/a" })
            expect(second.status).toBe(202)
            const jobs = yield* fanOutJobs
            expect(jobs).toHaveLength(2)
            const ids = jobs.map((job) => job.notificationId)
            expect(new Set(ids).size).toBe(2)
            for (const id of ids) expect(id).toMatch(/^[0-9a-f-]{36}$/)
          })
        ))

      it.effect("a content change seen before answers 409 and enqueues nothing", () =>
        served((send) =>
          Effect.gen(function*() {
            const change = { title: "T", content_id: "c-1", base_path: "/guide", public_updated_at: "2026-03-01T10:00:00Z" }
            expect((yield* post(send, "/notifications", change)).status).toBe(202)
            const again = yield* expectRefused(
              () => post(send, "/content-changes", { ...change, public_updated_at: "2026-03-01T11:00:00+01:00" }),
              409
            )
            expect(again.body).toEqual({ error: "Content change already received" })
            expect(yield* queuedJobCount).toBe(1)
            expect((yield* post(send, "/notifications", { ...change, base_path: "/other" })).status).toBe(202)
            expect(yield* queuedJobCount).toBe(2)
          })
        ))

      it.effect("a notification with nothing to send or a field of the wrong type answers 422 naming the fields, no job", () =>
        served((send) =>
          Effect.gen(function*() {
            yield* expectRefused(() => post(send, "/notifications", { tags: { format: ["guide"] } }), 422, ["subject"])
            yield* expectRefused(() => post(send, "/notifications", { subject: "S" }), 422, ["body"])
            yield* expectRefused(() => post(send, "/notifications", { subject: "S", body: "   " }), 422, ["body"])
            yield* expectRefused(
              () => post(send, "/content-changes", { title: "T", urgent: "yes", tags: { format: "guide" }, priority: "top" }),
              422,
              ["urgent", "tags.format", "priority"]
            )
            for (const public_updated_at of ["yesterday", "0000-01-01T00:00:00Z", "0999-12-31T23:59:59Z", "+010000-01-01T00:00:00Z"]) {
              yield* expectRefused(() => post(send, "/notifications", { title: "T", public_updated_at }), 422, ["public_updated_at"])
            }
            for (const base_path of ["@evil.example/login", "//evil.example/x", "/a)[b](https://evil.example"]) {
              yield* expectRefused(() => post(send, "/notifications", { title: "T", base_path }), 422, ["base_path"])
            }
            yield* expectRefused(() => post(send, "/notifications", { raw: "{\"title\": " }), 400, ["body"])
            yield* expectRefused(() => post(send, "/notifications", [{ title: "T" }]), 422)
            expect(yield* queuedJobCount).toBe(0)
          })
        ))
    })

    describe("subscriptions", () => {
      it.effect("POST /subscriptions creates (201), finds the same (200), and replaces it at another frequency (200)", () =>
        served((send) =>
          Effect.gen(function*() {
            yield* post(send, "/subscriber-lists", GUIDES)
            const created = yield* post(send, "/subscriptions", { address: "Ann@Example.org", subscribable_id: 1 })
            expect(created.status).toBe(201)
            expect(created.body.id).toBe(created.body.subscription.id)
            expect(created.body.subscription).toMatchObject({
              subscriber_id: 1,
              subscriber_list_id: 1,
              frequency: "immediately",
              source: "user_signed_up",
              ended_at: null,
              ended_reason: null,
              created_at: NOW.toISOString()
            })

            const same = yield* post(send, "/subscriptions", { address: "ann@example.org", subscriber_list_id: 1, frequency: "immediately" })
            expect(same.status).toBe(200)
            expect(same.body.id).toBe(created.body.id)

            const daily = yield* post(send, "/subscriptions", { address: "ANN@example.org", subscriber_list_id: "1", frequency: "daily" })
            expect(daily.status).toBe(200)
            expect(daily.body.id).not.toBe(created.body.id)
            expect(daily.body.subscription).toMatchObject({ frequency: "daily", source: "frequency_changed", subscriber_id: 1 })
            const old = yield* send("GET", `/subscriptions/${created.body.id}`)
            expect(old.body.subscription).toMatchObject({ ended_reason: "frequency_changed", ended_at: NOW.toISOString() })

            const view = yield* send("GET", "/subscribers/1/subscriptions")
            expect(view.body.subscriber.address).toBe("Ann@example.org")
            expect(view.body.subscriptions.map((subscription: { id: string }) => subscription.id)).toEqual([daily.body.id])
          })
        ))

      it.effect("POST /subscriptions: 404 for an unknown list, 422 for a bad address or frequency, 400 when address is missing", () =>
        served((send) =>
          Effect.gen(function*() {
            yield* post(send, "/subscriber-lists", GUIDES)
            const unknownList = yield* expectRefused(() => post(send, "/subscriptions", { address: "a@example.org", subscribable_id: 99 }), 404)
            expect(unknownList.body).toEqual({ error: "Could not find the subscriber list" })
            yield* expectRefused(() => post(send, "/subscriptions", { address: "a@example.org", subscribable_id: 1e30 }), 422, ["subscribable_id"])
            yield* expectRefused(
              () => post(send, "/subscriptions", { address: "a@example.org", subscribable_id: "99999999999999999999" }),
              422,
              ["subscribable_id"]
            )
            yield* expectRefused(() => post(send, "/subscriptions", { address: "not an address", subscribable_id: 1 }), 422, ["address"])
            yield* expectRefused(
              () => post(send, "/subscriptions", { address: "a@example.org", subscribable_id: 1, frequency: "hourly" }),
              422,
              ["frequency"]
            )
            yield* expectRefused(() => post(send, "/subscriptions", { subscribable_id: 1 }), 400, ["address"])
            yield* expectRefused(() => post(send, "/subscriptions", { address: "a@example.org" }), 422, ["subscriber_list_id"])
            yield* expectRefused(() => post(send, "/subscriptions", { address: "a@example.org", subscribable_id: -1 }), 422, ["subscribable_id"])
            yield* expectRefused(
              () => post(send, "/subscriptions", { address: "a@example.org", subscribable_id: 1, subscriber_list_id: 2 }),
              422,
              ["subscribable_id"]
            )
          })
        ))

      it.effect("GET /subscriptions/{id} embeds the list and the subscriber; 404 for unknown and malformed ids", () =>
        served((send) =>
          Effect.gen(function*() {
            yield* post(send, "/subscriber-lists", GUIDES)
            const [subscription] = yield* subscribed(send, "ann@example.org", 1)
            const found = yield* send("GET", `/subscriptions/${subscription!.id.toUpperCase()}`)
            expect(found.status).toBe(200)
            expect(found.body.subscription).toMatchObject({
              id: subscription!.id,
              subscriber_list: { id: 1, slug: "guides" },
              subscriber: { id: 1, address: "ann@example.org", deactivated_at: null }
            })
            for (const id of ["5c3e9f5e-0000-4000-8000-000000000000", "not-a-uuid", "%00"]) {
              const missing = yield* send("GET", `/subscriptions/${id}`)
              expect(missing.status, id).toBe(404)
              expect(missing.body).toEqual({ error: "Could not find the subscription" })
            }
          })
        ))

      it.effect("PATCH /subscriptions/{id} replaces it at the new frequency; 404 once ended or unknown; 422 for a bad frequency", () =>
        served((send) =>
          Effect.gen(function*() {
            yield* post(send, "/subscriber-lists", GUIDES)
            const [subscription] = yield* subscribed(send, "ann@example.org", 1)
            const changed = yield* send("PATCH", `/subscriptions/${subscription!.id}`, { frequency: "weekly" })
            expect(changed.status).toBe(200)
            expect(changed.body.subscription).toMatchObject({ frequency: "weekly", source: "frequency_changed", ended_at: null })
            expect(changed.body.subscription.id).not.toBe(subscription!.id)
            const unchanged = yield* send("PATCH", `/subscriptions/${changed.body.subscription.id}`, { frequency: "weekly" })
            expect(unchanged.body.subscription.id).toBe(changed.body.subscription.id)

            yield* expectRefused(() => send("PATCH", `/subscriptions/${subscription!.id}`, { frequency: "daily" }), 404)
            yield* expectRefused(() => send("PATCH", "/subscriptions/not-a-uuid", { frequency: "daily" }), 404)
            yield* expectRefused(() => send("PATCH", `/subscriptions/${changed.body.subscription.id}`, { frequency: "hourly" }), 422, ["frequency"])
            yield* expectRefused(() => send("PATCH", `/subscriptions/${changed.body.subscription.id}`, {}), 400, ["frequency"])
          })
        ))

      it.effect("POST /unsubscribe/{id} ends it (204); the last one deactivates the subscriber; 404 when ended or unknown", () =>
        served((send) =>
          Effect.gen(function*() {
            yield* post(send, "/subscriber-lists", GUIDES)
            yield* post(send, "/subscriber-lists", NEWS)
            const [guides, news] = yield* subscribed(send, "ann@example.org", 1, 2)
            const first = yield* post(send, `/unsubscribe/${guides!.id}`)
            expect(first.status).toBe(204)
            expect(first.text).toBe("")
            const afterFirst = yield* send("GET", "/subscribers/1/subscriptions")
            expect(afterFirst.body.subscriber.deactivated_at).toBeNull()
            expect(afterFirst.body.subscriptions.map((s: { id: string }) => s.id)).toEqual([news!.id])
            expect((yield* send("GET", `/subscriptions/${guides!.id}`)).body.subscription).toMatchObject({
              ended_reason: "unsubscribed",
              ended_at: NOW.toISOString()
            })

            expect((yield* post(send, `/unsubscribe/${news!.id}`)).status).toBe(204)
            const afterLast = yield* send("GET", "/subscribers/1/subscriptions")
            expect(afterLast.body.subscriber.deactivated_at).toBe(NOW.toISOString())
            expect(afterLast.body.subscriptions).toEqual([])

            yield* expectRefused(() => post(send, `/unsubscribe/${news!.id}`), 404)
            yield* expectRefused(() => post(send, "/unsubscribe/5c3e9f5e-0000-4000-8000-000000000000"), 404)
            yield* expectRefused(() => post(send, "/unsubscribe/x"), 404)
          })
        ))

      it.effect("the same new address subscribing many times at once makes one subscriber and one subscription", () =>
        served((send) =>
          Effect.gen(function*() {
            yield* post(send, "/subscriber-lists", GUIDES)
            const answers = yield* Effect.all(
              Array.from({ length: 8 }, (_, n) =>
                post(send, "/subscriptions", { address: n % 2 === 0 ? "new@example.org" : "NEW@example.org", subscribable_id: 1 })),
              { concurrency: "unbounded" }
            )
            expect(answers.map((answer) => answer.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 201])
            expect(new Set(answers.map((answer) => answer.body.id)).size).toBe(1)
            const view = yield* send("GET", "/subscribers/1/subscriptions")
            expect(view.body.subscriptions).toHaveLength(1)
            expect((yield* send("GET", "/subscribers/2/subscriptions")).status).toBe(404)
          })
        ))

      it.effect("subscribing again reactivates a deactivated subscriber", () =>
        served((send) =>
          Effect.gen(function*() {
            yield* post(send, "/subscriber-lists", GUIDES)
            yield* subscribed(send, "ann@example.org", 1)
            expect((yield* send("DELETE", "/subscribers/1")).status).toBe(204)
            yield* TestClock.adjust("1 day")
            const again = yield* post(send, "/subscriptions", { address: "ann@example.org", subscribable_id: 1 })
            expect(again.status).toBe(201)
            expect(again.body.subscription.subscriber_id).toBe(1)
            const view = yield* send("GET", "/subscribers/1/subscriptions")
            expect(view.body.subscriber.deactivated_at).toBeNull()
            expect(view.body.subscriptions).toHaveLength(1)
          })
        ))
    })

    describe("subscribers", () => {
      it.effect("GET /subscribers/{id}/subscriptions lists the active ones by list title; 404 unknown; 400 for a malformed id", () =>
        served((send) =>
          Effect.gen(function*() {
            yield* post(send, "/subscriber-lists", NEWS)
            yield* post(send, "/subscriber-lists", GUIDES)
            yield* subscribed(send, "ann@example.org", 1, 2)
            const view = yield* send("GET", "/subscribers/1/subscriptions")
            expect(view.status).toBe(200)
            expect(view.body.subscriber).toMatchObject({ id: 1, address: "ann@example.org", sso_user_uid: null })
            expect(view.body.subscriptions.map((s: { subscriber_list: { title: string } }) => s.subscriber_list.title))
              .toEqual(["Guides", "News"])
            for (const id of ["99"]) {
              const missing = yield* send("GET", `/subscribers/${id}/subscriptions`)
              expect(missing.status, id).toBe(404)
              expect(missing.body).toEqual({ error: "Could not find the subscriber" })
            }
            for (const id of ["abc", "0", "-1", "1.5", "1x", "99999999999999999999", "9007199254740993"]) {
              expectEnvelope(yield* send("GET", `/subscribers/${id}/subscriptions`), 400)
            }
          })
        ))

      it.effect("PATCH /subscribers/{id} changes the address; taken (in any case) or invalid is 422, missing 400, unknown 404", () =>
        served((send) =>
          Effect.gen(function*() {
            yield* post(send, "/subscriber-lists", GUIDES)
            yield* subscribed(send, "ann@example.org", 1)
            yield* subscribed(send, "bob@example.org", 1)
            const changed = yield* send("PATCH", "/subscribers/1", { new_address: "ann.new@Example.ORG" })
            expect(changed.status).toBe(200)
            expect(changed.body.subscriber).toMatchObject({ id: 1, address: "ann.new@example.org" })
            const ownInOtherCase = yield* send("PATCH", "/subscribers/1", { new_address: "Ann.New@example.org" })
            expect(ownInOtherCase.status).toBe(200)
            expect(ownInOtherCase.body.subscriber.address).toBe("Ann.New@example.org")

            yield* expectRefused(() => send("PATCH", "/subscribers/1", { new_address: "BOB@example.org" }), 422, ["new_address"])
            yield* expectRefused(() => send("PATCH", "/subscribers/1", { new_address: "bob@" }), 422, ["new_address"])
            yield* expectRefused(() => send("PATCH", "/subscribers/1", { new_address: 12 }), 422, ["new_address"])
            yield* expectRefused(() => send("PATCH", "/subscribers/1", {}), 400, ["new_address"])
            const unknown = yield* expectRefused(() => send("PATCH", "/subscribers/99", { new_address: "c@example.org" }), 404)
            expect(unknown.body).toEqual({ error: "Could not find the subscriber" })
            yield* expectRefused(() => send("PATCH", "/subscribers/x", { new_address: "c@example.org" }), 400)
            yield* expectRefused(() => send("PATCH", "/subscribers/1e30", { new_address: "c@example.org" }), 400)
          })
        ))

      it.effect("DELETE /subscribers/{id} ends every subscription and deactivates (204); 404 when unknown or already deactivated", () =>
        served((send) =>
          Effect.gen(function*() {
            yield* post(send, "/subscriber-lists", GUIDES)
            yield* post(send, "/subscriber-lists", NEWS)
            const [guides, news] = yield* subscribed(send, "ann@example.org", 1, 2)
            const [bobs] = yield* subscribed(send, "bob@example.org", 1)
            const deleted = yield* send("DELETE", "/subscribers/1")
            expect(deleted.status).toBe(204)
            expect(deleted.text).toBe("")
            for (const subscription of [guides!, news!]) {
              expect((yield* send("GET", `/subscriptions/${subscription.id}`)).body.subscription).toMatchObject({
                ended_reason: "unsubscribed",
                subscriber: { deactivated_at: NOW.toISOString() }
              })
            }
            expect((yield* send("GET", `/subscriptions/${bobs!.id}`)).body.subscription.ended_at).toBeNull()
            yield* expectRefused(() => send("DELETE", "/subscribers/1"), 404)
            yield* expectRefused(() => send("DELETE", "/subscribers/99"), 404)
            yield* expectRefused(() => send("DELETE", "/subscribers/99999999999999999999"), 400)
            yield* expectRefused(() => send("DELETE", "/subscribers/abc"), 400)
          })
        ))
    })

    describe("auth tokens", () => {
      it.effect("POST /subscribers/auth-token answers 201 and queues an email whose link carries a JWT signed with the secret", () =>
        served((send) =>
          Effect.gen(function*() {
            yield* post(send, "/subscriber-lists", GUIDES)
            yield* subscribed(send, "ann@example.org", 1)
            const answer = yield* post(send, "/subscribers/auth-token", {
              address: "ANN@example.org",
              destination: "/email/manage/authenticate?from=alerts&x=a%20b",
              redirect: "/email/manage"
            })
            expect(answer.status).toBe(201)
            expect(answer.body.subscriber).toMatchObject({ id: 1, address: "ann@example.org" })

            const emails = yield* Effect.flatMap(RecordingEmailQueue, (recording) => recording.queued)
            expect(emails).toHaveLength(1)
            const [email] = emails
            expect(email!.address).toBe("ann@example.org")
            expect(email!.subject).toBe("Confirm your email address")
            const link = /\((https:[^)]+)\)/.exec(email!.body)?.[1]
            expect(link).toMatch(new RegExp(`^${SITE}/email/manage/authenticate\\?from=alerts&x=a%20b&token=[\\w.-]+$`))
            const token = new URL(link!).searchParams.get("token")!
            const { payload, protectedHeader } = yield* Effect.promise(() =>
              jwtVerify(token, new TextEncoder().encode(SECRET), { currentDate: NOW, issuer: "alerts-under-test" })
            )
            expect(protectedHeader.alg).toBe("HS256")
            expect(payload).toEqual({
              data: { subscriber_id: 1, redirect: "/email/manage" },
              iat: NOW.getTime() / 1000,
              exp: NOW.getTime() / 1000 + 7 * 24 * 3600,
              iss: "alerts-under-test"
            })
            const forged = yield* Effect.promise(() =>
              jwtVerify(token, new TextEncoder().encode(`${SECRET}!`)).then(() => "accepted", () => "refused")
            )
            expect(forged).toBe("refused")
          })
        ))

      it.effect("an auth token reactivates a deactivated subscriber; without redirect the claim is null", () =>
        served((send) =>
          Effect.gen(function*() {
            yield* post(send, "/subscriber-lists", GUIDES)
            yield* subscribed(send, "ann@example.org", 1)
            expect((yield* send("DELETE", "/subscribers/1")).status).toBe(204)
            const answer = yield* post(send, "/subscribers/auth-token", { address: "ann@example.org", destination: "/manage" })
            expect(answer.status).toBe(201)
            expect(answer.body.subscriber.deactivated_at).toBeNull()
            expect((yield* send("GET", "/subscribers/1/subscriptions")).body.subscriber.deactivated_at).toBeNull()
            const [email] = yield* Effect.flatMap(RecordingEmailQueue, (recording) => recording.queued)
            const link = /\((https:[^)]+)\)/.exec(email!.body)?.[1]
            expect(link).toMatch(new RegExp(`^${SITE}/manage\\?token=`))
            const { payload } = yield* Effect.promise(() =>
              jwtVerify(new URL(link!).searchParams.get("token")!, new TextEncoder().encode(SECRET), { currentDate: NOW })
            )
            expect(payload["data"]).toEqual({ subscriber_id: 1, redirect: null })
          })
        ))

      it.effect("POST /subscribers/auth-token: 5 emails an hour to one address, then 429 with Retry-After and nothing sent", () =>
        served((send) =>
          Effect.gen(function*() {
            yield* post(send, "/subscriber-lists", GUIDES)
            yield* subscribed(send, "ann@example.org", 1)
            yield* subscribed(send, "bob@example.org", 1)
            const ask = (address: string) => post(send, "/subscribers/auth-token", { address, destination: "/manage" })
            for (let request = 0; request < 5; request++) {
              expect((yield* ask("ann@example.org")).status).toBe(201)
              yield* TestClock.adjust("1 minute")
            }
            // a refusal does not reactivate a deactivated subscriber
            expect((yield* send("DELETE", "/subscribers/1")).status).toBe(204)
            const before = yield* snapshot
            const refused = yield* ask("ANN@example.org")
            expect(refused.status).toBe(429)
            expect(refused.retryAfter).toBe(String(55 * 60))
            expect(refused.body).toEqual({ error: expect.stringContaining("try again later") })
            expect(yield* snapshot).toEqual(before)
            expect((yield* ask("bob@example.org")).status).toBe(201)
            yield* TestClock.adjust("55 minutes")
            expect((yield* ask("ann@example.org")).status).toBe(201)
          })
        ))

      it.effect("POST /subscribers/auth-token: 404 unknown address, 422 bad address or a destination or redirect off the site", () =>
        served((send) =>
          Effect.gen(function*() {
            yield* post(send, "/subscriber-lists", GUIDES)
            yield* subscribed(send, "ann@example.org", 1)
            const unknown = yield* expectRefused(
              () => post(send, "/subscribers/auth-token", { address: "nobody@example.org", destination: "/manage" }),
              404
            )
            expect(unknown.body).toEqual({ error: "Could not find the subscriber" })
            yield* expectRefused(() => post(send, "/subscribers/auth-token", { address: "nobody", destination: "/manage" }), 422, ["address"])
            for (const destination of ["//evil.example/x", "https://evil.example/", "manage", "/\\evil.example", "/a b", "",
              "/x)[Confirm](https://evil.example/collect", "@evil.example/login", "/a//b", "/a#b"]) {
              yield* expectRefused(
                () => post(send, "/subscribers/auth-token", { address: "ann@example.org", destination }),
                422,
                ["destination"]
              )
            }
            yield* expectRefused(
              () => post(send, "/subscribers/auth-token", { address: "ann@example.org", destination: "/manage", redirect: "//evil.example" }),
              422,
              ["redirect"]
            )
            yield* expectRefused(() => post(send, "/subscribers/auth-token", { address: "ann@example.org" }), 400, ["destination"])
          })
        ))
    })

    describe("health", () => {
      const healthAt = (send: Send, size: number, oldestAgeSeconds: number | null) =>
        Effect.gen(function*() {
          const recording = yield* RecordingEmailQueue
          yield* recording.setFigures({
            size,
            oldestImmediatePendingSince: oldestAgeSeconds === null ? null : new Date(NOW.getTime() - oldestAgeSeconds * 1000)
          })
          const answer = yield* send("GET", "/healthcheck")
          expect(answer.status).toBe(200)
          expect(answer.contentType).toBe("application/json; charset=utf-8")
          return answer.body
        })

      it.effect("GET /healthcheck grades queue size and age at their thresholds; the status is the worst; always 200", () =>
        served((send) =>
          Effect.gen(function*() {
            const statuses = (body: any) => [body.checks.queue_size.status, body.checks.queue_age.status, body.status]
            expect(yield* healthAt(send, 0, null)).toEqual({
              checks: { queue_size: { status: "ok" }, queue_age: { status: "ok" }, delivery: { status: "ok" } },
              status: "ok"
            })
            expect(statuses(yield* healthAt(send, 74_999, 149))).toEqual(["ok", "ok", "ok"])
            expect(statuses(yield* healthAt(send, 75_000, 0))).toEqual(["warning", "ok", "warning"])
            expect(statuses(yield* healthAt(send, 99_999, 150))).toEqual(["warning", "warning", "warning"])
            expect(statuses(yield* healthAt(send, 100_000, 150))).toEqual(["critical", "warning", "critical"])
            expect(statuses(yield* healthAt(send, 10, 299))).toEqual(["ok", "warning", "warning"])
            expect(statuses(yield* healthAt(send, 10, 300))).toEqual(["ok", "critical", "critical"])
            expect(statuses(yield* healthAt(send, 10, -5))).toEqual(["ok", "ok", "ok"])
            // while the provider refuses to send for the service, delivery is paused: critical, and until when
            const { deliveryPause } = yield* AlertsParts
            yield* deliveryPause.pause(new Date(NOW.getTime() + 60_000), "550 5.7.1 Relaying denied")
            expect(yield* healthAt(send, 0, null)).toEqual({
              checks: {
                queue_size: { status: "ok" },
                queue_age: { status: "ok" },
                delivery: { status: "critical", paused_until: new Date(NOW.getTime() + 60_000).toISOString() }
              },
              status: "critical"
            })
          })
        ))
    })

    describe("subscriptions confirmed by email", () => {
      /** The list Guides, whose slug is `guides`. */
      const guides = (send: Send) =>
        Effect.map(post(send, "/subscriber-lists", GUIDES), (answer) => answer.body.subscriber_list.slug as string)

      it.effect("POST /subscriptions/auth-token answers 200 and emails a link whose JWT holds the address, list and frequency; nothing is stored", () =>
        served((send) =>
          Effect.gen(function*() {
            const slug = yield* guides(send)
            const before = yield* snapshot
            const answer = yield* post(send, "/subscriptions/auth-token", {
              address: "ANN@example.org",
              topic_id: slug,
              frequency: "weekly"
            })
            expect(answer.status).toBe(200)
            expect(answer.body).toEqual({})

            const { emails: queued, ...stored } = yield* snapshot
            const { emails: _before, ...storedBefore } = before
            expect(stored).toEqual(storedBefore)
            expect(queued).toHaveLength(1)
            const [email] = queued
            expect(email!.address).toBe("ann@example.org")
            expect(email!.subject).toBe("Confirm that you want to get emails")
            expect(email!.body).toContain('"Guides"')
            expect(email!.body).toContain("once a week")
            const link = /\((https:[^)]+)\)/.exec(email!.body)?.[1]
            expect(link).toMatch(new RegExp(`^${SITE}/email/subscriptions/authenticate\\?token=[\\w.-]+$`))
            const { payload, protectedHeader } = yield* Effect.promise(() =>
              jwtVerify(new URL(link!).searchParams.get("token")!, new TextEncoder().encode(SECRET), {
                currentDate: NOW,
                issuer: "alerts-under-test"
              })
            )
            expect(protectedHeader.alg).toBe("HS256")
            expect(payload).toEqual({
              data: { address: "ann@example.org", topic_id: slug, frequency: "weekly" },
              iat: NOW.getTime() / 1000,
              exp: NOW.getTime() / 1000 + 7 * 24 * 3600,
              iss: "alerts-under-test"
            })
          })
        ))

      it.effect("an unknown list is 404; a bad address or frequency 422; a missing field 400; each changes nothing", () =>
        served((send) =>
          Effect.gen(function*() {
            const slug = yield* guides(send)
            yield* expectRefused(() => post(send, "/subscriptions/auth-token", { address: "ann@example.org", topic_id: "news", frequency: "daily" }), 404)
            yield* expectRefused(
              () => post(send, "/subscriptions/auth-token", { address: "not an address", topic_id: slug, frequency: "daily" }),
              422,
              ["address"]
            )
            yield* expectRefused(
              () => post(send, "/subscriptions/auth-token", { address: "ann@example.org", topic_id: slug, frequency: "hourly" }),
              422,
              ["frequency"]
            )
            yield* expectRefused(() => post(send, "/subscriptions/auth-token", { address: "ann@example.org", topic_id: slug }), 400, ["frequency"])
            yield* expectRefused(
              () => post(send, "/subscriptions/auth-token", { address: "ann@example.org", topic_id: "x".repeat(1001), frequency: "daily" }),
              422,
              ["topic_id"]
            )
          })
        ))

      it.effect("5 confirmations an hour to one address, then 429 with Retry-After and nothing sent", () =>
        served((send) =>
          Effect.gen(function*() {
            const slug = yield* guides(send)
            const ask = (address: string) => post(send, "/subscriptions/auth-token", { address, topic_id: slug, frequency: "daily" })
            for (let request = 0; request < 5; request++) expect((yield* ask("ann@example.org")).status).toBe(200)
            const refused = yield* ask("Ann@Example.org")
            expect(refused.status).toBe(429)
            expect(Number(refused.retryAfter)).toBe(3600)
            expect((yield* ask("bob@example.org")).status).toBe(200)
            expect(yield* Effect.map(snapshot, (state) => state.emails.length)).toBe(6)
            yield* TestClock.adjust(Duration.hours(1))
            expect((yield* ask("ann@example.org")).status).toBe(200)
          })
        ))
    })

    describe("Notify's status callbacks", () => {
      const TOKEN = "notify-callback-token-0123456789"
      const withCallbacks = { ...SETTINGS, statusCallbackToken: Redacted.make(TOKEN) }
      const servedWith = <A>(
        settings: Partial<AlertsSettings>,
        body: (url: string, send: Send) => Effect.Effect<A, unknown, AlertsParts | RecordingEmailQueue>
      ) =>
        Effect.gen(function*() {
          yield* TestClock.setTime(NOW.getTime())
          const url = yield* baseUrl
          return yield* body(url, sender(url))
        }).pipe(Effect.scoped, Effect.provide(servedOver(backend(settings))))

      /** `authorization` null sends none. */
      const callback = (url: string, body: unknown, authorization: string | null = `Bearer ${TOKEN}`) =>
        Effect.promise(async () => {
          const response = await fetch(`${url}/status-updates`, {
            method: "POST",
            headers: {
              "content-type": "application/json",
              ...(authorization === null ? {} : { authorization })
            },
            body: typeof body === "string" ? body : JSON.stringify(body)
          })
          const text = await response.text()
          return {
            status: response.status,
            challenge: response.headers.get("www-authenticate"),
            body: text === "" ? undefined : JSON.parse(text)
          }
        })

      /** Ann, subscribed to one list, and an email that was sent to her (as the `notify` provider references it). */
      const sentToAnn = (send: Send) =>
        Effect.gen(function*() {
          yield* post(send, "/subscriber-lists", GUIDES)
          const [subscription] = yield* subscribed(send, "ann@example.org", 1)
          const { emailStore } = yield* AlertsParts
          const emailId = yield* Effect.orDie(emailStore.queueEmail({ address: "ann@example.org", subject: "News", body: "x" }))
          return { subscription: subscription!, emailId }
        })

      const update = (emailId: string | null, status: string, overrides: Record<string, unknown> = {}) => ({
        id: "740e5834-3a29-46b4-9a6f-16142fde533a",
        reference: emailId,
        to: "Ann@Example.org",
        status,
        created_at: "2026-03-02T09:00:00.000000Z",
        completed_at: "2026-03-02T09:01:00.000000Z",
        sent_at: "2026-03-02T09:00:30.000000Z",
        notification_type: "email",
        ...overrides
      })

      const reportsOf = (emailId: string) =>
        Effect.flatMap(AlertsParts, ({ emailStore }) => emailStore.deliveryReportsOf(emailId)).pipe(Effect.orDie)

      it.effect("a permanent-failure ends every subscription of the address and deactivates its subscriber", () =>
        servedWith(withCallbacks, (url, send) =>
          Effect.gen(function*() {
            const { emailId, subscription } = yield* sentToAnn(send)
            const answer = yield* callback(url, update(emailId, "permanent-failure"))
            expect(answer).toEqual({ status: 204, challenge: null, body: undefined })
            const { store } = yield* AlertsParts
            const details = yield* Effect.orDie(store.subscriptionById(subscription.id))
            expect(details._tag === "Some" && details.value.subscription).toMatchObject({ endedReason: "non_existent_email" })
            expect(details._tag === "Some" && details.value.subscriber.deactivatedAt).toEqual(NOW)
            expect(yield* reportsOf(emailId)).toEqual([{
              source: "notify",
              providerId: "740e5834-3a29-46b4-9a6f-16142fde533a",
              status: "permanent-failure",
              detail: null,
              reportedAt: new Date("2026-03-02T09:01:00.000Z"),
              receivedAt: NOW
            }])
            // Notify calls again: kept once
            expect((yield* callback(url, update(emailId, "permanent-failure"))).status).toBe(204)
            expect(yield* reportsOf(emailId)).toHaveLength(1)
          })
        ))

      it.effect("delivered, temporary-failure and technical-failure are kept with the email and end nothing", () =>
        servedWith(withCallbacks, (url, send) =>
          Effect.gen(function*() {
            const { emailId } = yield* sentToAnn(send)
            const before = yield* snapshot
            for (const status of ["temporary-failure", "technical-failure", "delivered"]) {
              expect((yield* callback(url, update(emailId, status))).status).toBe(204)
            }
            expect(yield* snapshot).toEqual(before)
            expect((yield* reportsOf(emailId)).map((report) => report.status))
              .toEqual(["temporary-failure", "technical-failure", "delivered"])
          })
        ))

      it.effect("an unknown reference, another address or another kind of message changes nothing, and is answered 204", () =>
        servedWith(withCallbacks, (url, send) =>
          Effect.gen(function*() {
            const { emailId } = yield* sentToAnn(send)
            const before = yield* snapshot
            const ignored = [
              update("1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed", "permanent-failure"),
              update("not-an-email-id", "permanent-failure"),
              update(null, "permanent-failure"),
              update(emailId, "permanent-failure", { to: "someone.else@example.org" }),
              update(emailId, "permanent-failure", { notification_type: "sms" })
            ]
            for (const body of ignored) {
              expect((yield* callback(url, body)).status, JSON.stringify(body)).toBe(204)
            }
            expect(yield* snapshot).toEqual(before)
            expect(yield* reportsOf(emailId)).toEqual([])
          })
        ))

      it.effect("without the right bearer token: 401 with a challenge, the body unread and nothing changed", () =>
        servedWith(withCallbacks, (url, send) =>
          Effect.gen(function*() {
            const { emailId } = yield* sentToAnn(send)
            const before = yield* snapshot
            for (const authorization of [null, "Bearer wrong-token-0123456789", `Basic ${TOKEN}`, `Bearer ${TOKEN}x`, "Bearer"]) {
              const answer = yield* callback(url, update(emailId, "permanent-failure"), authorization)
              expect(answer, String(authorization)).toEqual({
                status: 401,
                challenge: "Bearer",
                body: { error: "The bearer token is missing or wrong" }
              })
              // a bad body is not looked at either
              expect((yield* callback(url, "not json", authorization)).status).toBe(401)
            }
            expect(yield* snapshot).toEqual(before)
            expect(yield* reportsOf(emailId)).toEqual([])
          })
        ))

      it.effect("without a token set the endpoint is off: 404, whatever is sent", () =>
        servedWith(SETTINGS, (url, send) =>
          Effect.gen(function*() {
            const { emailId } = yield* sentToAnn(send)
            const before = yield* snapshot
            const answer = yield* callback(url, update(emailId, "permanent-failure"))
            expect(answer).toEqual({ status: 404, challenge: null, body: { error: "Not Found" } })
            expect(yield* snapshot).toEqual(before)
            expect(yield* reportsOf(emailId)).toEqual([])
          })
        ))

      it.effect("a bad body answers 400 or 422 naming the field, and changes nothing", () =>
        servedWith(withCallbacks, (url, send) =>
          Effect.gen(function*() {
            const { emailId } = yield* sentToAnn(send)
            const before = yield* snapshot
            const bodies: ReadonlyArray<readonly [unknown, number, string]> = [
              ["not json", 400, "body"],
              [[], 422, ""],
              [update(emailId, "bounced"), 422, "status"],
              [update(emailId, "permanent-failure", { completed_at: "yesterday" }), 422, "completed_at"],
              [update(emailId, "permanent-failure", { to: "ann\u0000@example.org" }), 422, "to"],
              [update(emailId, "permanent-failure", { reference: 42 }), 422, "reference"],
              [update(emailId, "permanent-failure", { id: "x".repeat(101) }), 422, "id"],
              [{ reference: emailId, status: "permanent-failure" }, 400, ""]
            ]
            for (const [body, status, field] of bodies) {
              const answer = yield* callback(url, body)
              expect(answer.status, JSON.stringify(body)).toBe(status)
              expect(typeof answer.body.error).toBe("string")
              expect(answer.body.error).toContain(field)
            }
            expect(yield* snapshot).toEqual(before)
            expect(yield* reportsOf(emailId)).toEqual([])
          })
        ))
    })

    describe("bad input of every kind", () => {
      const bodies: ReadonlyArray<readonly [string, string, unknown]> = [
        ["POST", "/subscriber-lists", { raw: "not json" }],
        ["POST", "/subscriber-lists", { raw: "" }],
        ["POST", "/subscriber-lists", null],
        ["POST", "/subscriber-lists", "text"],
        ["POST", "/subscriber-lists", { title: "T", tags: { ["__proto__"]: "x" } }],
        ["POST", "/subscriber-lists", { title: "T\u0000", tags: { format: ["guide"] } }],
        ["POST", "/subscriber-lists", { title: "T", tags: { format: ["\ud800"] } }],
        ["POST", "/notifications", { raw: "{" }],
        ["POST", "/content-changes", 42],
        ["POST", "/notifications", { title: "T", tags: { format: [1] } }],
        ["POST", "/subscriptions", { raw: "[" }],
        ["POST", "/subscriptions", { address: ["a@example.org"], subscribable_id: 1 }],
        ["POST", "/subscriptions", { address: "a@example.org", subscribable_id: "one" }],
        ["PATCH", "/subscribers/1", { raw: "{]" }],
        ["PATCH", "/subscribers/1", { new_address: null }],
        ["PATCH", "/subscriptions/SUBSCRIPTION", { raw: "" }],
        ["PATCH", "/subscriptions/SUBSCRIPTION", { frequency: 1 }],
        ["POST", "/subscribers/auth-token", { raw: "nope" }],
        ["POST", "/subscribers/auth-token", { address: "ann@example.org", destination: 5 }],
        ["POST", "/subscriptions/auth-token", { raw: "[" }],
        ["POST", "/subscriptions/auth-token", { address: "ann@example.org", topic_id: ["guides"], frequency: "daily" }],
        ["POST", "/subscriptions/auth-token", { address: "ann@example.org\u0000", topic_id: "guides", frequency: "daily" }]
      ]

      it.effect("answers 4xx in the JSON envelope and changes nothing", () =>
        served((send) =>
          Effect.gen(function*() {
            yield* post(send, "/subscriber-lists", GUIDES)
            const [subscription] = yield* subscribed(send, "ann@example.org", 1)
            const before = yield* snapshot
            for (const [method, path, body] of bodies) {
              const answer = yield* send(method, path.replace("SUBSCRIPTION", subscription!.id), body)
              const label = `${method} ${path} ${JSON.stringify(body)}`
              expect([400, 422], label).toContain(answer.status)
              expect(answer.contentType, label).toContain("application/json")
              expect(typeof answer.body?.error, label).toBe("string")
            }
            expect(Object.prototype).not.toHaveProperty("x")
            expect(yield* snapshot).toEqual(before)
            expect(yield* queuedJobCount).toBe(0)
          })
        ))
    })
  })
