import { fetchThatHangs } from "@civicstack/kit/testing"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { ManagedRuntime } from "effect"
import {
  AlertsApiError,
  AlertsClientError,
  type AlertsPromiseClient,
  allOf,
  anyOf,
  ContentChangeAlreadyReceivedError,
  createAlertsClient,
  criteria,
  ForbiddenError,
  InvalidRequestError,
  SubscriberListNotFoundError,
  SubscriberNotFoundError,
  SubscriptionNotFoundError,
  UnauthenticatedError,
  UnprocessableEntityError
} from "../src"
import { FAKE_TOKEN, FORBIDDEN_TOKEN, QUEUE_WARNING_SIZE, RealAlertsServer, Received, serverUrl } from "./support/realAlerts"

interface Exchange {
  readonly method: string
  readonly url: URL
  readonly status: number
}

/** The global fetch, recording each request and the status it was answered with. */
const recordingFetch = () => {
  const exchanges: Array<Exchange> = []
  const fetchRecording: typeof fetch = async (input, init) => {
    const request = new Request(input, init)
    const response = await fetch(request)
    exchanges.push({ method: request.method, url: new URL(request.url), status: response.status })
    return response
  }
  return { fetch: fetchRecording, exchanges, last: () => exchanges[exchanges.length - 1]! }
}

/** Awaits a rejection and returns it (fails the test when the call succeeds). */
const rejectionOf = async (call: Promise<unknown>): Promise<unknown> => {
  const outcome = await call.then((value) => ({ value }), (error: unknown) => ({ error }))
  if (!("error" in outcome)) throw new Error(`expected a rejection, got ${JSON.stringify(outcome.value)}`)
  return outcome.error
}

describe("createAlertsClient against the real service", () => {
  const server = ManagedRuntime.make(RealAlertsServer)
  const recording = recordingFetch()
  let baseUrl = ""
  let client: AlertsPromiseClient
  beforeAll(async () => {
    baseUrl = await server.runPromise(serverUrl)
    client = createAlertsClient({ baseUrl, bearerToken: FAKE_TOKEN, fetch: recording.fetch })
  })
  afterAll(async () => {
    await client.close()
    await server.dispose()
  })

  /** A refusal of the service: its class, the status actually answered, and the envelope. */
  const expectRefusal = async (
    call: Promise<unknown>,
    refusalClass: abstract new(...args: never) => AlertsApiError,
    expected: { readonly status?: number; readonly error?: string; readonly details?: unknown }
  ) => {
    const error = await rejectionOf(call)
    expect(error).toBeInstanceOf(refusalClass)
    expect(error).toBeInstanceOf(AlertsApiError)
    expect(error).toMatchObject(expected)
    expect((error as AlertsApiError).status).toBe(recording.last().status)
    return error as AlertsApiError
  }

  it("finds or creates, finds and gets lists, telling 201 from 200", async () => {
    const created = await client.findOrCreateList({ title: "Promised list", tags: { topics: anyOf("a", "b") } })
    const found = await client.findOrCreateList({ title: "Promised list, again", tags: { topics: ["b", "a"] } })
    expect(created).toMatchObject({ outcome: "created", subscriberList: { title: "Promised list" } })
    expect(found).toMatchObject({ outcome: "found", subscriberList: { id: created.subscriberList.id, title: "Promised list, again" } })
    expect(await client.findList({ tags: { topics: ["a", "b"] } })).toEqual(found.subscriberList)
    expect(await client.getList(created.subscriberList.slug)).toEqual(found.subscriberList)
  })

  it("writes criteria as bracketed query parameters, names such as __proto__ included", async () => {
    const tags = criteria([["__proto__", ["polluted"]], ["constructor", allOf("a", "b")], ["format", anyOf("news")]])
    await client.findOrCreateList({ title: "Bracketed", tags, links: { organisations: ["org-1", "org-2"] }, documentType: "news" })

    await client.findList({ tags, links: { organisations: ["org-1", "org-2"] }, documentType: "news" })

    const { method, url } = recording.last()
    expect(method).toBe("GET")
    expect(url.pathname).toBe("/subscriber-lists")
    expect([...url.searchParams]).toEqual([
      ["tags[__proto__][]", "polluted"],
      ["tags[constructor][all][]", "a"],
      ["tags[constructor][all][]", "b"],
      ["tags[format][any][]", "news"],
      ["links[organisations][]", "org-1"],
      ["links[organisations][]", "org-2"],
      ["document_type", "news"]
    ])
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
  })

  it("notifies on /notifications and /content-changes; the same content change twice is a 409", async () => {
    const change = { title: "Promised change", contentId: "c-1", basePath: "/p", publicUpdatedAt: "2024-05-01T10:00:00Z" }
    await client.notify(change)
    expect(recording.last()).toMatchObject({ method: "POST", status: 202 })
    expect(recording.last().url.pathname).toBe("/notifications")
    await client.sendContentChange({ subject: "Promised subject", body: "Promised body" })
    expect(recording.last()).toMatchObject({ method: "POST", status: 202 })
    expect(recording.last().url.pathname).toBe("/content-changes")
    const received = await server.runPromise(Received.use((received) => received.notifications))
    expect(received.slice(-2).map(({ body, path }) => [path, body.title ?? body.subject])).toEqual([
      ["/notifications", "Promised change"],
      ["/content-changes", "Promised subject"]
    ])
    const refusal = await expectRefusal(client.sendContentChange(change), ContentChangeAlreadyReceivedError, {
      error: "Content change already received"
    })
    expect(recording.last().url.pathname).toBe("/content-changes")
    expect(refusal).toMatchObject({ status: 409, tag: "ContentChangeAlreadyReceived", name: "ContentChangeAlreadyReceivedError" })
    expect(refusal.toJSON()).toEqual({ error: "Content change already received" })
  })

  it("subscribes, reads, changes and ends subscriptions and subscribers", async () => {
    const { subscriberList: list } = await client.findOrCreateList({ title: "Promised subscriptions", contentId: "c-2" })
    const created = await client.subscribe({ address: "kit@example.org", listId: list.id, frequency: "daily" })
    const found = await client.subscribe({ address: "kit@example.org", listId: list.id, frequency: "daily" })
    expect(created.outcome).toBe("created")
    expect(found).toEqual({ ...created, outcome: "found" })
    const subscriberId = created.subscription.subscriber_id

    expect(await client.getSubscription(created.id)).toMatchObject({ id: created.id, subscriber: { id: subscriberId } })
    const weekly = await client.changeFrequency(created.id, "weekly")
    expect(weekly).toMatchObject({ frequency: "weekly", source: "frequency_changed" })
    const listing = await client.subscriberSubscriptions(subscriberId)
    expect(listing.subscriptions.map((subscription) => subscription.id)).toEqual([weekly.id])
    expect(await client.changeAddress(subscriberId, "kit.new@example.org")).toMatchObject({ address: "kit.new@example.org" })
    expect(await client.sendAuthToken({ address: "kit.new@example.org", destination: "/email/manage" })).toMatchObject({
      id: subscriberId
    })
    await expect(client.unsubscribe(weekly.id)).resolves.toBeUndefined()
    expect(recording.last()).toMatchObject({ method: "POST", status: 204 })

    const other = await client.subscribe({ address: "kit.new@example.org", listId: list.id })
    await expect(client.deactivateSubscriber(subscriberId)).resolves.toBeUndefined()
    expect(recording.last()).toMatchObject({ method: "DELETE", status: 204 })
    expect(await client.getSubscription(other.id)).toMatchObject({ ended_reason: "unsubscribed" })
  })

  it("rejects with a class per refusal carrying the status answered and the envelope", async () => {
    const { subscriberList: list } = await client.findOrCreateList({ title: "Promised refusals", contentId: "c-3" })
    const { subscription } = await client.subscribe({ address: "lu@example.org", listId: list.id })
    await client.subscribe({ address: "taken.lu@example.org", listId: list.id })

    await expectRefusal(client.getList("no-such-list"), SubscriberListNotFoundError, {
      status: 404,
      error: "Could not find the subscriber list",
      details: undefined
    })
    await expectRefusal(client.subscriberSubscriptions(987_654), SubscriberNotFoundError, {
      status: 404,
      error: "Could not find the subscriber"
    })
    await expectRefusal(client.unsubscribe("00000000-0000-4000-8000-000000000000"), SubscriptionNotFoundError, {
      status: 404,
      error: "Could not find the subscription"
    })
    const taken = await expectRefusal(
      client.changeAddress(subscription.subscriber_id, "taken.lu@example.org"),
      UnprocessableEntityError,
      { status: 422, details: { new_address: ["is already used by another subscriber"] } }
    )
    expect(taken.cause).toMatchObject({ _tag: "UnprocessableEntity" })
  })

  it("refuses bad arguments before sending, with the class and status the service would answer", async () => {
    const sent = recording.exchanges.length
    const missingTitle = await rejectionOf(client.findOrCreateList({ title: undefined as unknown as string, contentId: "x" }))
    const badDestination = await rejectionOf(client.sendAuthToken({ address: "a@example.org", destination: "https://evil.example" }))
    expect(missingTitle).toBeInstanceOf(InvalidRequestError)
    expect(missingTitle).toMatchObject({ status: 400, details: { title: expect.any(Array) } })
    expect(badDestination).toBeInstanceOf(UnprocessableEntityError)
    expect(badDestination).toMatchObject({ status: 422, details: { destination: expect.any(Array) } })
    expect(recording.exchanges.length).toBe(sent)
  })

  it("without a token, or with one the service refuses, rejects with UnauthenticatedError or ForbiddenError", async () => {
    const anonymous = createAlertsClient({ baseUrl, fetch: recording.fetch })
    const wrong = createAlertsClient({ baseUrl, bearerToken: "not-a-known-token", fetch: recording.fetch })
    const forbidden = createAlertsClient({ baseUrl, bearerToken: FORBIDDEN_TOKEN, fetch: recording.fetch })
    try {
      await expectRefusal(anonymous.getList("anything"), UnauthenticatedError, {
        status: 401,
        error: "A valid bearer token is required"
      })
      await expectRefusal(wrong.notify({ title: "x" }), UnauthenticatedError, { status: 401 })
      await expectRefusal(forbidden.getSubscription("abc"), ForbiddenError, {
        status: 403,
        error: "No signin permission on email-alert-api"
      })
      expect((await anonymous.health()).checks.queue_age.status).toBe("ok")
    } finally {
      await Promise.all([anonymous.close(), wrong.close(), forbidden.close()])
    }
  })
})

describe("createAlertsClient health", () => {
  const server = ManagedRuntime.make(RealAlertsServer)
  afterAll(() => server.dispose())

  it("reads the queue's health as the service reports it", async () => {
    const client = createAlertsClient({ baseUrl: await server.runPromise(serverUrl), bearerToken: FAKE_TOKEN })
    try {
      expect(await client.health()).toEqual({
        checks: { queue_size: { status: "ok" }, queue_age: { status: "ok" }, delivery: { status: "ok" } },
        status: "ok"
      })
      for (let queued = 0; queued < QUEUE_WARNING_SIZE; queued++) await client.notify({ title: `queued ${queued}` })
      expect(await server.runPromise(Received.use((received) => received.notifications))).toHaveLength(QUEUE_WARNING_SIZE)
      expect(await client.health()).toMatchObject({ checks: { queue_size: { status: "warning" } }, status: "warning" })
    } finally {
      await client.close()
    }
  })
})

describe("createAlertsClient failures outside the contract", () => {
  const respondWith = (response: () => Response): typeof fetch => () => Promise.resolve(response())

  it("rejects with AlertsClientError, not an API refusal, when the service cannot be reached", async () => {
    const client = createAlertsClient({ baseUrl: "https://alerts.example", fetch: () => Promise.reject(new TypeError("fetch failed")) })
    const error = await rejectionOf(client.getList("a"))
    expect(error).toBeInstanceOf(AlertsClientError)
    expect(error).not.toBeInstanceOf(AlertsApiError)
    expect(error).toMatchObject({ reason: "Transport" })
    await client.close()
  })

  it("rejects with AlertsClientError carrying the status of an undeclared answer", async () => {
    const client = createAlertsClient({
      baseUrl: "https://alerts.example",
      fetch: respondWith(() => new Response("Bad Gateway", { status: 502 }))
    })
    const error = await rejectionOf(client.subscribe({ address: "a@example.org", listId: 1 }))
    expect(error).toBeInstanceOf(AlertsClientError)
    expect(error).not.toBeInstanceOf(AlertsApiError)
    expect(error).toMatchObject({ reason: "UnexpectedResponse", status: 502 })
    await client.close()
  })

  it("rejects with AlertsClientError for a body outside the contract", async () => {
    const client = createAlertsClient({
      baseUrl: "https://alerts.example",
      fetch: respondWith(() => Response.json({ checks: {}, status: "fine" }))
    })
    await expect(client.health()).rejects.toMatchObject({ _tag: "AlertsClientError", reason: "UnexpectedResponse" })
    await client.close()
  })

  it("rejects with InvalidRequestError for the service's 400 envelope", async () => {
    const client = createAlertsClient({
      baseUrl: "https://alerts.example",
      fetch: respondWith(() => Response.json({ error: "body: is not JSON", details: { body: ["is not JSON"] } }, { status: 400 }))
    })
    const error = await rejectionOf(client.notify({ title: "x" }))
    expect(error).toBeInstanceOf(InvalidRequestError)
    expect(error).toMatchObject({ status: 400, error: "body: is not JSON", details: { body: ["is not JSON"] } })
    await client.close()
  })

  it("sends every request through the given fetch, under the base URL's path", async () => {
    const requested: Array<string> = []
    const client = createAlertsClient({
      baseUrl: "https://alerts.example/api",
      fetch: (input, init) => {
        const request = new Request(input, init)
        requested.push(`${request.method} ${request.url} ${request.headers.get("authorization")}`)
        return Promise.resolve(Response.json({ error: "Could not find the subscription" }, { status: 404 }))
      },
      bearerToken: "t0ken"
    })
    await expect(client.getSubscription("a b/c")).rejects.toBeInstanceOf(SubscriptionNotFoundError)
    await client.close()
    expect(requested).toEqual(["GET https://alerts.example/api/subscriptions/a%20b%2Fc Bearer t0ken"])
  })

  it("rejects calls in flight and calls after close() with an AbortError", async () => {
    const { fetch, wasCalled } = fetchThatHangs()
    const client = createAlertsClient({ baseUrl: "https://alerts.example", fetch })
    const inFlight = client.health()
    await wasCalled
    await client.close()
    await expect(inFlight).rejects.toMatchObject({ name: "AbortError" })
    await expect(client.getList("x")).rejects.toMatchObject({ name: "AbortError" })
  })
})
