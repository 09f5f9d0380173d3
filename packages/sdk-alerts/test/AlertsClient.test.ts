import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import {
  AlertsClient,
  AlertsClientError,
  allOf,
  anyOf,
  ContentChangeAlreadyReceived,
  criteria,
  Forbidden,
  InvalidRequest,
  SubscriberList,
  SubscriberListNotFound,
  SubscriberNotFound,
  SubscriptionNotFound,
  Unauthenticated,
  UnprocessableEntity
} from "../src"
import { FAKE_TOKEN, FORBIDDEN_TOKEN, PUBLIC_SITE_URL, RealAlertsServer, Received, serverUrl } from "./support/realAlerts"

const clientOfServer = (bearerToken: string | undefined) =>
  Layer.unwrapEffect(Effect.map(serverUrl, (baseUrl) => AlertsClient.layer({ baseUrl, bearerToken }))).pipe(
    Layer.provide(NodeHttpClient.layerUndici)
  )

const TestEnvironment = clientOfServer(FAKE_TOKEN).pipe(Layer.provideMerge(RealAlertsServer))

/** A subscriber list of its own for each test that needs one. */
const newList = (name: string) =>
  Effect.flatMap(AlertsClient, (client) =>
    Effect.map(
      client.findOrCreateList({ title: `List ${name}`, tags: { topics: [name] } }),
      ({ subscriberList }) => subscriberList
    ))

layer(TestEnvironment)("AlertsClient against the real service", (it) => {
  describe("findOrCreateList", () => {
    it.effect("creates a list (201), then finds it by the same criteria written otherwise (200) and retitles it", () =>
      Effect.gen(function*() {
        const client = yield* AlertsClient

        const created = yield* client.findOrCreateList({
          title: "Schools in Wales",
          tags: { format: ["guidance", "news"], locations: allOf("wales") },
          documentType: "press_release"
        })
        const found = yield* client.findOrCreateList({
          title: "Welsh schools",
          tags: { locations: allOf("wales"), format: anyOf("news", "guidance") },
          documentType: "press_release"
        })

        expect(created.outcome).toBe("created")
        expect(created.subscriberList).toBeInstanceOf(SubscriberList)
        expect(created.subscriberList).toMatchObject({
          title: "Schools in Wales",
          slug: "schools-in-wales",
          subscription_url: `${PUBLIC_SITE_URL}/email/subscriptions/new?topic_id=schools-in-wales`,
          document_type: "press_release",
          email_document_supertype: "",
          content_id: null
        })
        expect({ ...created.subscriberList.tags }).toEqual({ format: ["guidance", "news"], locations: { all: ["wales"] } })
        expect(created.subscriberList.created_at).toBeInstanceOf(Date)
        expect(found.outcome).toBe("found")
        expect(found.subscriberList.id).toBe(created.subscriberList.id)
        expect(found.subscriberList.title).toBe("Welsh schools")
      }))

    it.effect("refuses a list with nothing to match on, or without a title, before sending it", () =>
      Effect.gen(function*() {
        const client = yield* AlertsClient

        const nothingToMatch = yield* Effect.flip(client.findOrCreateList({ title: "Everything" }))
        const noTitle = yield* Effect.flip(client.findOrCreateList({ title: undefined as unknown as string, contentId: "x" }))
        const badCriterion = yield* Effect.flip(
          client.findOrCreateList({ title: "Bad", tags: { format: { any: [], all: ["x"] } as never } })
        )

        expect(nothingToMatch).toBeInstanceOf(UnprocessableEntity)
        expect(nothingToMatch).toMatchObject({ details: { tags: [expect.stringContaining("needs tags, links")] } })
        expect(noTitle).toBeInstanceOf(InvalidRequest)
        expect(Object.keys((noTitle as InvalidRequest).details ?? {})).toEqual(["title"])
        expect(badCriterion).toBeInstanceOf(UnprocessableEntity)
        expect(Object.keys((badCriterion as UnprocessableEntity).details ?? {})).toEqual(["tags.format"])
      }))
  })

  describe("findList and getList", () => {
    it.effect("finds the list with exactly the given criteria, and only that one", () =>
      Effect.gen(function*() {
        const client = yield* AlertsClient
        const { subscriberList } = yield* client.findOrCreateList({
          title: "Taxes",
          tags: { topics: anyOf("tax", "vat") },
          links: { organisations: ["hmrc-id"] },
          emailDocumentSupertype: "publications"
        })

        const found = yield* client.findList({
          tags: { topics: ["vat", "tax"] },
          links: { organisations: anyOf("hmrc-id") },
          emailDocumentSupertype: "publications"
        })
        const fewerCriteria = yield* Effect.flip(client.findList({ tags: { topics: ["vat", "tax"] } }))
        const allInstead = yield* Effect.flip(
          client.findList({
            tags: { topics: allOf("vat", "tax") },
            links: { organisations: ["hmrc-id"] },
            emailDocumentSupertype: "publications"
          })
        )

        expect(found).toEqual(subscriberList)
        expect(fewerCriteria).toBeInstanceOf(SubscriberListNotFound)
        expect(fewerCriteria).toMatchObject({ error: "Could not find the subscriber list" })
        expect(allInstead).toBeInstanceOf(SubscriberListNotFound)
      }))

    it.effect("sends names such as __proto__ and constructor as plain data, and pollutes nothing", () =>
      Effect.gen(function*() {
        const client = yield* AlertsClient
        const received = yield* Received
        const tags = criteria([["__proto__", ["polluted"]], ["constructor", allOf("a", "b")], ["prototype", ["p"]]])
        const links = criteria(new Map([["__proto__", anyOf("x")]]))

        const { subscriberList } = yield* client.findOrCreateList({ title: "Awkward names", tags, links })
        const found = yield* client.findList({ tags, links })

        expect(found.id).toBe(subscriberList.id)
        const [query] = (yield* received.listQueries).slice(-1)
        expect(Object.keys(query!.tags).sort()).toEqual(["__proto__", "constructor", "prototype"])
        expect(Object.getOwnPropertyDescriptor(query!.tags, "__proto__")?.value).toEqual(["polluted"])
        expect(query!.tags["constructor"]).toEqual({ all: ["a", "b"] })
        expect(Object.getOwnPropertyDescriptor(query!.links, "__proto__")?.value).toEqual({ any: ["x"] })
        expect(Object.getOwnPropertyDescriptor(found.tags, "__proto__")?.value).toEqual(["polluted"])
        expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
        expect(Object.prototype).not.toHaveProperty("0")
      }))

    it.effect("gets a list by its slug; a slug is one path segment, even with a slash in it", () =>
      Effect.gen(function*() {
        const client = yield* AlertsClient
        const received = yield* Received
        const list = yield* newList("slugs")

        const got = yield* client.getList(list.slug)
        const withSlash = yield* Effect.flip(client.getList(`${list.slug}/subscriptions`))
        const before = (yield* received.listQueries).length
        const empty = yield* Effect.flip(client.getList(""))

        expect(got).toEqual(list)
        expect(withSlash).toBeInstanceOf(SubscriberListNotFound)
        expect(empty).toBeInstanceOf(UnprocessableEntity)
        expect(empty).toMatchObject({ details: { slug: ["must not be empty"] } })
        expect((yield* received.listQueries).length).toBe(before)
      }))
  })

  describe("notify and sendContentChange", () => {
    it.effect("queues a notification under its wire names, on /notifications and /content-changes", () =>
      Effect.gen(function*() {
        const client = yield* AlertsClient
        const received = yield* Received
        const publicUpdatedAt = new Date("2024-03-01T12:00:00Z")

        yield* client.notify({
          title: "New guidance",
          changeNote: "First published",
          tags: { topics: ["tax"] },
          documentType: "guidance",
          contentId: "content-notify",
          basePath: "/guidance/new",
          publicUpdatedAt,
          priority: "high",
          urgent: false
        })
        yield* client.sendContentChange({ subject: "Changed", body: "It changed", publicUpdatedAt: "2024-03-02T08:00:00Z" })

        const [notification, contentChange] = (yield* received.notifications).slice(-2)
        expect(notification?.path).toBe("/notifications")
        expect(notification?.body).toMatchObject({
          title: "New guidance",
          change_note: "First published",
          document_type: "guidance",
          content_id: "content-notify",
          base_path: "/guidance/new",
          public_updated_at: publicUpdatedAt,
          priority: "high",
          urgent: false
        })
        expect({ ...notification?.body.tags }).toEqual({ topics: ["tax"] })
        expect(contentChange?.path).toBe("/content-changes")
        expect(contentChange?.body).toMatchObject({ subject: "Changed", body: "It changed" })
      }))

    it.effect("fails with ContentChangeAlreadyReceived for the same content change twice", () =>
      Effect.gen(function*() {
        const client = yield* AlertsClient
        const change = {
          title: "Twice",
          contentId: "content-twice",
          basePath: "/twice",
          publicUpdatedAt: new Date("2024-04-01T00:00:00Z")
        }
        yield* client.notify(change)
        const again = yield* Effect.flip(client.sendContentChange(change))
        expect(again).toBeInstanceOf(ContentChangeAlreadyReceived)
        expect(again).toMatchObject({ error: "Content change already received" })
      }))

    it.effect("refuses a notification with nothing to send, or a bad field, before sending it", () =>
      Effect.gen(function*() {
        const client = yield* AlertsClient
        const received = yield* Received
        const before = (yield* received.notifications).length

        const nothing = yield* Effect.flip(client.notify({ subject: "Only a subject" }))
        const badDate = yield* Effect.flip(client.notify({ title: "Dated", publicUpdatedAt: "yesterday" }))
        const invalidDate = yield* Effect.flip(client.notify({ title: "Dated", publicUpdatedAt: new Date(Number.NaN) }))

        expect(nothing).toBeInstanceOf(UnprocessableEntity)
        expect(nothing).toMatchObject({ details: { body: ["a notification needs a subject and a body, or a title"] } })
        expect(badDate).toMatchObject({ _tag: "UnprocessableEntity", details: { public_updated_at: expect.anything() } })
        expect(invalidDate).toMatchObject({ _tag: "UnprocessableEntity", details: { public_updated_at: expect.anything() } })
        expect((yield* received.notifications).length).toBe(before)
      }))
  })

  describe("subscriptions", () => {
    it.effect("subscribes (201), finds the same subscription (200), and replaces it for another frequency", () =>
      Effect.gen(function*() {
        const client = yield* AlertsClient
        const list = yield* newList("subscribe")

        const created = yield* client.subscribe({ address: "ada@example.org", listId: list.id })
        const same = yield* client.subscribe({ address: "ada@example.org", listId: list.id, frequency: "immediately" })
        const weekly = yield* client.subscribe({ address: "ada@example.org", listId: list.id, frequency: "weekly" })

        expect(created).toMatchObject({ outcome: "created", id: created.subscription.id })
        expect(created.subscription).toMatchObject({
          subscriber_list_id: list.id,
          frequency: "immediately",
          source: "user_signed_up",
          ended_at: null
        })
        expect(same).toEqual({ ...created, outcome: "found" })
        expect(weekly.outcome).toBe("found")
        expect(weekly.subscription).toMatchObject({ frequency: "weekly", source: "frequency_changed" })
        const replaced = yield* client.getSubscription(created.id)
        expect(replaced).toMatchObject({ ended_reason: "frequency_changed" })
        expect(replaced.ended_at).toBeInstanceOf(Date)
      }))

    it.effect("fails with SubscriberListNotFound for an unknown list, and with the service's 422 for a bad address", () =>
      Effect.gen(function*() {
        const client = yield* AlertsClient
        const list = yield* newList("subscribe-refused")

        const unknownList = yield* Effect.flip(client.subscribe({ address: "bob@example.org", listId: 987_654 }))
        const badAddress = yield* Effect.flip(client.subscribe({ address: "not an address", listId: list.id }))
        const badFrequency = yield* Effect.flip(
          client.subscribe({ address: "bob@example.org", listId: list.id, frequency: "hourly" as never })
        )
        const badListId = yield* Effect.flip(client.subscribe({ address: "bob@example.org", listId: -1 }))

        expect(unknownList).toBeInstanceOf(SubscriberListNotFound)
        expect(badAddress).toBeInstanceOf(UnprocessableEntity)
        expect(badAddress).toMatchObject({ details: { address: ["must be an email address"] } })
        expect(badFrequency).toBeInstanceOf(UnprocessableEntity)
        expect(Object.keys((badFrequency as UnprocessableEntity).details ?? {})).toEqual(["frequency"])
        expect(badListId).toMatchObject({ _tag: "UnprocessableEntity", details: { subscriber_list_id: expect.anything() } })
      }))

    it.effect("gets a subscription with its list and subscriber; an unknown one is not found", () =>
      Effect.gen(function*() {
        const client = yield* AlertsClient
        const list = yield* newList("get-subscription")
        const { id } = yield* client.subscribe({ address: "cy@example.org", listId: list.id, frequency: "daily" })

        const details = yield* client.getSubscription(id)
        const unknown = yield* Effect.flip(client.getSubscription("00000000-0000-4000-8000-000000000000"))
        const odd = yield* Effect.flip(client.getSubscription("../subscribers/1"))

        expect(details).toMatchObject({ id, frequency: "daily", subscriber: { address: "cy@example.org" } })
        expect(details.subscriber_list).toEqual(list)
        expect(unknown).toBeInstanceOf(SubscriptionNotFound)
        expect(unknown).toMatchObject({ error: "Could not find the subscription" })
        expect(odd).toBeInstanceOf(SubscriptionNotFound)
      }))

    it.effect("changes a subscription's frequency; the ended one can no longer be changed", () =>
      Effect.gen(function*() {
        const client = yield* AlertsClient
        const list = yield* newList("frequency")
        const { id } = yield* client.subscribe({ address: "di@example.org", listId: list.id })

        const daily = yield* client.changeFrequency(id, "daily")
        const again = yield* Effect.flip(client.changeFrequency(id, "weekly"))
        const bad = yield* Effect.flip(client.changeFrequency(daily.id, "monthly" as never))

        expect(daily).toMatchObject({ frequency: "daily", source: "frequency_changed", subscriber_list_id: list.id })
        expect(daily.id).not.toBe(id)
        expect(again).toBeInstanceOf(SubscriptionNotFound)
        expect(bad).toBeInstanceOf(UnprocessableEntity)
        expect(Object.keys((bad as UnprocessableEntity).details ?? {})).toEqual(["frequency"])
      }))

    it.effect("unsubscribes once; the second time the subscription is not found", () =>
      Effect.gen(function*() {
        const client = yield* AlertsClient
        const list = yield* newList("unsubscribe")
        const { id, subscription } = yield* client.subscribe({ address: "ed@example.org", listId: list.id })

        yield* client.unsubscribe(id)
        const again = yield* Effect.flip(client.unsubscribe(id))

        expect(again).toBeInstanceOf(SubscriptionNotFound)
        expect(yield* client.getSubscription(id)).toMatchObject({ ended_reason: "unsubscribed" })
        // the last active subscription ended, so the subscriber is deactivated
        const { subscriber, subscriptions } = yield* client.subscriberSubscriptions(subscription.subscriber_id)
        expect(subscriptions).toEqual([])
        expect(subscriber.deactivated_at).toBeInstanceOf(Date)
      }))
  })

  describe("subscribers", () => {
    it.effect("lists a subscriber's active subscriptions by list title, each with its list", () =>
      Effect.gen(function*() {
        const client = yield* AlertsClient
        const zebra = yield* newList("zebra")
        const aardvark = yield* newList("aardvark")
        const ended = yield* newList("ended")
        yield* client.subscribe({ address: "fi@example.org", listId: zebra.id })
        const first = yield* client.subscribe({ address: "fi@example.org", listId: aardvark.id, frequency: "weekly" })
        const gone = yield* client.subscribe({ address: "fi@example.org", listId: ended.id })
        yield* client.unsubscribe(gone.id)

        const { subscriber, subscriptions } = yield* client.subscriberSubscriptions(first.subscription.subscriber_id)

        expect(subscriber).toMatchObject({ id: first.subscription.subscriber_id, address: "fi@example.org", deactivated_at: null })
        expect(subscriptions.map((subscription) => subscription.subscriber_list.title)).toEqual(["List aardvark", "List zebra"])
        expect(subscriptions[0]).toMatchObject({ id: first.id, frequency: "weekly" })
        expect(subscriptions[0]?.subscriber_list).toEqual(aardvark)
      }))

    it.effect("fails with SubscriberNotFound for an unknown subscriber, and refuses an id that is not one", () =>
      Effect.gen(function*() {
        const client = yield* AlertsClient
        const unknown = yield* Effect.flip(client.subscriberSubscriptions(987_654))
        const zero = yield* Effect.flip(client.subscriberSubscriptions(0))
        const fraction = yield* Effect.flip(client.deactivateSubscriber(1.5))

        expect(unknown).toBeInstanceOf(SubscriberNotFound)
        expect(unknown).toMatchObject({ error: "Could not find the subscriber" })
        expect(zero).toMatchObject({ _tag: "UnprocessableEntity", details: { id: ["must be the id of a subscriber"] } })
        expect(fraction).toBeInstanceOf(UnprocessableEntity)
      }))

    it.effect("changes an address; one another subscriber has is refused with the service's 422", () =>
      Effect.gen(function*() {
        const client = yield* AlertsClient
        const list = yield* newList("address")
        const { subscription } = yield* client.subscribe({ address: "gu@example.org", listId: list.id })
        yield* client.subscribe({ address: "taken@example.org", listId: list.id })
        const id = subscription.subscriber_id

        const changed = yield* client.changeAddress(id, "gu.new@example.org")
        const taken = yield* Effect.flip(client.changeAddress(id, "taken@example.org"))
        const blank = yield* Effect.flip(client.changeAddress(id, "  "))
        const unknown = yield* Effect.flip(client.changeAddress(987_654, "x@example.org"))

        expect(changed).toMatchObject({ id, address: "gu.new@example.org" })
        expect(taken).toBeInstanceOf(UnprocessableEntity)
        expect(taken).toMatchObject({
          error: "new_address: is already used by another subscriber",
          details: { new_address: ["is already used by another subscriber"] }
        })
        expect(blank).toMatchObject({ _tag: "UnprocessableEntity", details: { new_address: ["must not be blank"] } })
        expect(unknown).toBeInstanceOf(SubscriberNotFound)
      }))

    it.effect("deactivates a subscriber, ending their subscriptions; a second time the subscriber is not found", () =>
      Effect.gen(function*() {
        const client = yield* AlertsClient
        const list = yield* newList("deactivate")
        const { id, subscription } = yield* client.subscribe({ address: "ha@example.org", listId: list.id })

        yield* client.deactivateSubscriber(subscription.subscriber_id)
        const again = yield* Effect.flip(client.deactivateSubscriber(subscription.subscriber_id))

        expect(again).toBeInstanceOf(SubscriberNotFound)
        const ended = yield* client.getSubscription(id)
        expect(ended).toMatchObject({ ended_reason: "unsubscribed" })
        expect(ended.subscriber.deactivated_at).toBeInstanceOf(Date)
      }))

    it.effect("sends an auth token to a known address; an unknown one is not found; an outside link is refused", () =>
      Effect.gen(function*() {
        const client = yield* AlertsClient
        const received = yield* Received
        const list = yield* newList("auth-token")
        const { subscription } = yield* client.subscribe({ address: "io@example.org", listId: list.id })

        const subscriber = yield* client.sendAuthToken({
          address: "IO@example.org",
          destination: "/email/manage",
          redirect: "/email/manage/frequency"
        })
        const unknown = yield* Effect.flip(client.sendAuthToken({ address: "nobody@example.org", destination: "/email" }))
        const outside = yield* Effect.flip(
          client.sendAuthToken({ address: "io@example.org", destination: "//evil.example/phish" })
        )

        expect(subscriber.id).toBe(subscription.subscriber_id)
        expect((yield* received.authTokens).slice(-1)).toEqual([
          { subscriberId: subscriber.id, destination: "/email/manage", redirect: "/email/manage/frequency" }
        ])
        expect(unknown).toBeInstanceOf(SubscriberNotFound)
        expect(outside).toMatchObject({ _tag: "UnprocessableEntity", details: { destination: [expect.stringContaining("path on the site")] } })
        expect((yield* received.authTokens).length).toBe(1)
      }))
  })

  it.effect("sends a subscription's confirmation for a known list; an unknown list is not found; a bad frequency is refused", () =>
    Effect.gen(function*() {
      const client = yield* AlertsClient
      const received = yield* Received
      const list = yield* newList("confirm-subscription")
      yield* client.sendSubscriptionAuthToken({ address: "io@example.org", topicId: list.slug, frequency: "daily" })
      const unknown = yield* Effect.flip(
        client.sendSubscriptionAuthToken({ address: "io@example.org", topicId: "no-such-list", frequency: "daily" })
      )
      const badFrequency = yield* Effect.flip(
        client.sendSubscriptionAuthToken({ address: "io@example.org", topicId: list.slug, frequency: "hourly" as "daily" })
      )
      expect(yield* received.subscriptionConfirmations).toEqual([
        { address: "io@example.org", topic_id: list.slug, frequency: "daily" }
      ])
      expect(unknown).toBeInstanceOf(SubscriberListNotFound)
      expect(badFrequency).toMatchObject({ _tag: "UnprocessableEntity", details: { frequency: [expect.any(String)] } })
    }))

  it.effect("health: the queue's health", () =>
    Effect.gen(function*() {
      const client = yield* AlertsClient
      const health = yield* client.health()
      expect(health.checks.queue_age).toEqual({ status: "ok" })
      expect(["ok", "warning"]).toContain(health.status)
      expect(health.checks.queue_size.status).toBe(health.status)
    }))
})

describe("AlertsClient access", () => {
  const withToken = (bearerToken: string | undefined) => clientOfServer(bearerToken).pipe(Layer.provideMerge(RealAlertsServer))

  it.effect("without a token: Unauthenticated for the API, and the health check still answers", () =>
    Effect.gen(function*() {
      const client = yield* AlertsClient
      const refused = yield* Effect.flip(client.getList("anything"))
      expect(refused).toBeInstanceOf(Unauthenticated)
      expect(refused).toMatchObject({ error: "A valid bearer token is required" })
      expect((yield* client.health()).status).toBe("ok")
    }).pipe(Effect.provide(withToken(undefined))))

  it.effect("with a token the service does not know: Unauthenticated", () =>
    Effect.gen(function*() {
      const client = yield* AlertsClient
      expect(yield* Effect.flip(client.notify({ title: "x" }))).toBeInstanceOf(Unauthenticated)
    }).pipe(Effect.provide(withToken("not-a-known-token"))))

  it.effect("with a token whose user may not use the API: Forbidden", () =>
    Effect.gen(function*() {
      const client = yield* AlertsClient
      const refused = yield* Effect.flip(client.subscribe({ address: "jo@example.org", listId: 1 }))
      expect(refused).toBeInstanceOf(Forbidden)
      expect(refused).toMatchObject({ error: "No signin permission on email-alert-api" })
    }).pipe(Effect.provide(withToken(FORBIDDEN_TOKEN))))

  it.effect("with the service's token the same call passes", () =>
    Effect.gen(function*() {
      const client = yield* AlertsClient
      const received = yield* Received
      yield* client.notify({ title: "allowed" })
      expect((yield* received.notifications).map((notification) => notification.body.title)).toEqual(["allowed"])
    }).pipe(Effect.provide(withToken(FAKE_TOKEN))))
})

describe("AlertsClient failures outside the contract", () => {
  const answering = (fetch: typeof globalThis.fetch) =>
    AlertsClient.layer({ baseUrl: "http://alerts.example" }).pipe(
      Layer.provide(FetchHttpClient.layer),
      Layer.provide(Layer.succeed(FetchHttpClient.Fetch, fetch))
    )
  const respondWith = (response: () => Response): typeof fetch => () => Promise.resolve(response())

  it.effect("a request that never reached the service is AlertsClientError Transport", () =>
    Effect.gen(function*() {
      const client = yield* AlertsClient
      const error = yield* Effect.flip(client.getSubscription("abc"))
      expect(error).toBeInstanceOf(AlertsClientError)
      expect(error).toMatchObject({ reason: "Transport" })
      expect((error as AlertsClientError).status).toBeUndefined()
      expect(error.message).toMatch(/^Could not reach the email alert service: .*GET http:\/\/alerts\.example\/subscriptions\/abc/)
    }).pipe(Effect.provide(answering(() => Promise.reject(new TypeError("fetch failed"))))))

  it.effect("an undeclared status is AlertsClientError UnexpectedResponse with the status", () =>
    Effect.gen(function*() {
      const client = yield* AlertsClient
      const error = yield* Effect.flip(client.health())
      expect(error).toMatchObject({ _tag: "AlertsClientError", reason: "UnexpectedResponse", status: 500 })
      expect(error.message).toMatch(/^The email alert service answered GET http:\/\/alerts\.example\/healthcheck with an unexpected status 500/)
    }).pipe(Effect.provide(answering(respondWith(() => Response.json({ error: "boom" }, { status: 500 }))))))

  it.effect("a body outside the contract is AlertsClientError UnexpectedResponse", () =>
    Effect.gen(function*() {
      const client = yield* AlertsClient
      const error = yield* Effect.flip(client.getList("some-slug"))
      expect(error).toMatchObject({ _tag: "AlertsClientError", reason: "UnexpectedResponse" })
      expect(error.message).toContain("does not match its contract")
    }).pipe(Effect.provide(answering(respondWith(() => Response.json({ subscriber_list: { id: "one" } }))))))

  it.effect("a body that is not JSON is AlertsClientError UnexpectedResponse", () =>
    Effect.gen(function*() {
      const client = yield* AlertsClient
      const error = yield* Effect.flip(client.getSubscription("abc"))
      expect(error).toMatchObject({ _tag: "AlertsClientError", reason: "UnexpectedResponse" })
      expect(error).not.toBeInstanceOf(SubscriptionNotFound)
    }).pipe(Effect.provide(answering(respondWith(() =>
      new Response("<html>maintenance</html>", { status: 200, headers: { "content-type": "application/json" } })
    )))))

  it.effect("a 404 whose body is not the envelope is not taken for a refusal", () =>
    Effect.gen(function*() {
      const client = yield* AlertsClient
      const error = yield* Effect.flip(client.getList("some-slug"))
      expect(error).toMatchObject({ _tag: "AlertsClientError", reason: "UnexpectedResponse" })
    }).pipe(Effect.provide(answering(respondWith(() => new Response("Not Found", { status: 404 }))))))

  it.effect("the service's 400 envelope decodes to InvalidRequest", () =>
    Effect.gen(function*() {
      const client = yield* AlertsClient
      const error = yield* Effect.flip(client.changeAddress(1, "a@example.org"))
      expect(error).toBeInstanceOf(InvalidRequest)
      expect(error).toMatchObject({ error: "new_address: is missing", details: { new_address: ["is missing"] } })
    }).pipe(Effect.provide(answering(respondWith(() =>
      Response.json({ error: "new_address: is missing", details: { new_address: ["is missing"] } }, { status: 400 })
    )))))

  it.effect("the platform's own 400 body decodes to InvalidRequest naming the field", () =>
    Effect.gen(function*() {
      const client = yield* AlertsClient
      const error = yield* Effect.flip(client.findOrCreateList({ title: "x", contentId: "y" }))
      expect(error).toBeInstanceOf(InvalidRequest)
      expect(error).toMatchObject({ error: "title: is refused", details: { title: ["is refused"] } })
    }).pipe(Effect.provide(answering(respondWith(() =>
      Response.json({
        _tag: "HttpApiDecodeError",
        message: "title is refused",
        issues: [{ _tag: "Type", path: ["title"], message: "is refused" }]
      }, { status: 400 })
    )))))
})
