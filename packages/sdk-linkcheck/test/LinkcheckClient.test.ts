import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { describe, expect, it, layer } from "@effect/vitest"
import { Chunk, Effect, Fiber, Layer, TestClock, TestContext } from "effect"
import {
  BatchNotFound,
  DEFAULT_CHECKED_WITHIN_SECONDS,
  InvalidRequest,
  LinkcheckClient,
  LinkcheckClientError,
  WaitTimeout
} from "../src"
import {
  CACHED_PREFIX,
  CHECKED_AT,
  CRASHING_URI,
  FAKE_TOKEN,
  FakeLinkcheck,
  FakeLinkcheckServer,
  NEVER_COMPLETING_URI,
  PLATFORM_REFUSED_URI,
  READS_IN_PROGRESS,
  REFUSED_URI,
  serverUrl
} from "./support/fakeLinkcheckServer"

const ClientOfFakeServer = Layer.unwrapEffect(
  Effect.map(serverUrl, (baseUrl) => LinkcheckClient.layer({ baseUrl, bearerToken: FAKE_TOKEN }))
).pipe(Layer.provide(NodeHttpClient.layerUndici))

const TestEnvironment = ClientOfFakeServer.pipe(Layer.provideMerge(FakeLinkcheckServer))

/** Lets the HTTP round trips of forked fibers progress until `count` sleeps are waiting on the TestClock. */
const untilSleeping = (count: number) =>
  Effect.gen(function*() {
    while (Chunk.size(yield* TestClock.sleeps()) < count) {
      yield* Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))
    }
  })

/**
 * The tests of one `layer` share its TestClock, and a sleep interrupted by a timeout stays in that clock's list of
 * sleeps: each test that counts sleeps gets a clock of its own.
 */
const withOwnTestClock = <A, E, R>(test: Effect.Effect<A, E, R>) => Effect.provide(test, TestContext.TestContext)

layer(TestEnvironment)("LinkcheckClient against a server of the same contract", (it) => {
  describe("check", () => {
    it.effect("returns the decoded LinkReport and sends the service's defaults", () =>
      Effect.gen(function*() {
        const client = yield* LinkcheckClient
        const fake = yield* FakeLinkcheck
        const uri = "https://example.org/defaults"

        const report = yield* client.check(uri)

        expect(report).toEqual({
          uri,
          status: "pending",
          checked: null,
          problem_summary: null,
          errors: [],
          warnings: [],
          danger: [],
          suggested_fix: null
        })
        const received = (yield* fake.checkRequests).filter((request) => request.uri === uri)
        expect(received).toEqual([{ uri, checked_within: DEFAULT_CHECKED_WITHIN_SECONDS, synchronous: false }])
      }))

    it.effect("sends checkedWithin and synchronous, and decodes the checked timestamp as a Date", () =>
      Effect.gen(function*() {
        const client = yield* LinkcheckClient
        const fake = yield* FakeLinkcheck
        const uri = "https://example.org/synchronous"

        const report = yield* client.check(uri, { checkedWithin: 0, synchronous: true })

        expect(report.status).toBe("ok")
        expect(report.checked).toEqual(CHECKED_AT)
        const received = (yield* fake.checkRequests).filter((request) => request.uri === uri)
        expect(received).toEqual([{ uri, checked_within: 0, synchronous: true }])
      }))

    it.effect("sends checkFragments as check_fragments", () =>
      Effect.gen(function*() {
        const client = yield* LinkcheckClient
        const fake = yield* FakeLinkcheck
        const uri = "https://example.org/fragments#costs"

        yield* client.check(uri, { checkFragments: false })
        yield* client.check(uri, { checkFragments: true })

        const received = (yield* fake.checkRequests).filter((request) => request.uri === uri)
        expect(received.map((request) => request.check_fragments)).toEqual([false, true])
      }))

    it.effect("fails with the service's InvalidRequest on a 400", () =>
      Effect.gen(function*() {
        const client = yield* LinkcheckClient
        const error = yield* Effect.flip(client.check(REFUSED_URI))
        expect(error).toBeInstanceOf(InvalidRequest)
        expect(error).toMatchObject({ error: "uri: is refused by this service", details: { uri: "is refused" } })
      }))

    it.effect("turns the platform's own 400 body into InvalidRequest naming the field", () =>
      Effect.gen(function*() {
        const client = yield* LinkcheckClient
        const error = yield* Effect.flip(client.check(PLATFORM_REFUSED_URI))
        expect(error).toBeInstanceOf(InvalidRequest)
        expect(error).toMatchObject({ error: "uri: is refused by the platform", details: { uri: "is refused by the platform" } })
      }))

    it.effect("refuses bad arguments before sending anything, as the service would", () =>
      Effect.gen(function*() {
        const client = yield* LinkcheckClient
        const fake = yield* FakeLinkcheck
        const before = (yield* fake.checkRequests).length

        const blank = yield* Effect.flip(client.check("  "))
        const fractional = yield* Effect.flip(client.check("https://example.org/", { checkedWithin: 1.5 }))
        const negative = yield* Effect.flip(client.check("https://example.org/", { checkedWithin: -1 }))

        expect(blank).toBeInstanceOf(InvalidRequest)
        expect(blank).toMatchObject({ details: { uri: "must not be blank" } })
        expect(fractional).toBeInstanceOf(InvalidRequest)
        expect(Object.keys((fractional as InvalidRequest).details ?? {})).toEqual(["checked_within"])
        expect(negative).toMatchObject({ details: { checked_within: "must be a whole number of seconds from 0 to 315360000 (ten years)" } })
        expect((yield* fake.checkRequests).length).toBe(before)
      }))

    it.effect("reports an unexpected status as LinkcheckClientError with the status", () =>
      Effect.gen(function*() {
        const client = yield* LinkcheckClient
        const error = yield* Effect.flip(client.check(CRASHING_URI))
        expect(error).toBeInstanceOf(LinkcheckClientError)
        expect(error).toMatchObject({ reason: "UnexpectedResponse", status: 500 })
        expect(error.message).toContain("unexpected status 500")
      }))
  })

  describe("createBatch", () => {
    it.effect("answers completedAtOnce for a 201 and decodes the report", () =>
      Effect.gen(function*() {
        const client = yield* LinkcheckClient
        const uris = [`${CACHED_PREFIX}a`, `${CACHED_PREFIX}b`]

        const created = yield* client.createBatch(uris)

        expect(created.completedAtOnce).toBe(true)
        expect(created.status).toBe("completed")
        expect(created.completed_at).toEqual(CHECKED_AT)
        expect(created.links.map((link) => link.uri)).toEqual(uris)
        expect(created.totals).toEqual({ links: 2, ok: 2, caution: 0, broken: 0, pending: 0, danger: 0 })
        expect(created).not.toHaveProperty("outcome")
      }))

    it.effect("answers not completedAtOnce for a 202 and sends every option under its wire name", () =>
      Effect.gen(function*() {
        const client = yield* LinkcheckClient
        const fake = yield* FakeLinkcheck
        const uris = ["https://example.org/options", ""]

        const created = yield* client.createBatch(uris, {
          checkedWithin: 60,
          priority: "low",
          webhookUri: "https://hooks.example/linkcheck",
          webhookSecretToken: "s3cret",
          checkFragments: false
        })

        expect(created.completedAtOnce).toBe(false)
        expect(created.status).toBe("in_progress")
        expect(created.completed_at).toBeNull()
        const received = (yield* fake.batchRequests).filter((body) => body.uris.includes("https://example.org/options"))
        expect(received).toEqual([{
          uris: ["https://example.org/options"],
          checked_within: 60,
          priority: "low",
          webhook_uri: "https://hooks.example/linkcheck",
          webhook_secret_token: "s3cret",
          check_fragments: false
        }])
      }))

    it.effect("refuses a batch with no uris, too many uris, or a webhook that is not an http(s) URL", () =>
      Effect.gen(function*() {
        const client = yield* LinkcheckClient

        const empty = yield* Effect.flip(client.createBatch(["", " "]))
        const tooMany = yield* Effect.flip(client.createBatch(Array.from({ length: 5001 }, (_, i) => `https://example.org/${i}`)))
        const badWebhook = yield* Effect.flip(client.createBatch(["https://example.org/"], { webhookUri: "ftp://hooks.example/" }))

        expect(empty).toBeInstanceOf(InvalidRequest)
        expect(empty).toMatchObject({ details: { uris: "must contain at least one uri" } })
        expect(tooMany).toMatchObject({ details: { uris: "must contain at most 5000 uris" } })
        expect(badWebhook).toMatchObject({
          error: "webhook_uri: must be an absolute http or https URL",
          details: { webhook_uri: "must be an absolute http or https URL" }
        })
      }))
  })

  describe("getBatch", () => {
    it.effect("reads a batch back", () =>
      Effect.gen(function*() {
        const client = yield* LinkcheckClient
        const { completedAtOnce, ...created } = yield* client.createBatch([`${CACHED_PREFIX}read-back`])
        expect(completedAtOnce).toBe(true)
        expect(yield* client.getBatch(created.id)).toEqual(created)
      }))

    it.effect("fails with BatchNotFound on a 404", () =>
      Effect.gen(function*() {
        const client = yield* LinkcheckClient
        const error = yield* Effect.flip(client.getBatch(987_654))
        expect(error).toBeInstanceOf(BatchNotFound)
        expect(error).toMatchObject({ _tag: "BatchNotFound", error: "Not Found" })
      }))
  })

  describe("waitForBatch", () => {
    it.effect("reads at once, then every pollInterval on the Clock, until the batch is completed", () =>
      Effect.gen(function*() {
        const client = yield* LinkcheckClient
        const fake = yield* FakeLinkcheck
        const { id } = yield* client.createBatch(["https://example.org/slow"])

        const waiting = yield* Effect.fork(client.waitForBatch(id, { pollInterval: "5 seconds" }))
        yield* untilSleeping(1)
        expect(yield* fake.readsOf(id)).toBe(1)

        yield* TestClock.adjust("4999 millis")
        expect(yield* fake.readsOf(id)).toBe(1)
        yield* TestClock.adjust("1 millis")
        yield* untilSleeping(1)
        expect(yield* fake.readsOf(id)).toBe(READS_IN_PROGRESS)

        yield* TestClock.adjust("5 seconds")
        const report = yield* Fiber.join(waiting)
        expect(report.status).toBe("completed")
        expect(report.completed_at).toEqual(CHECKED_AT)
        expect(yield* fake.readsOf(id)).toBe(READS_IN_PROGRESS + 1)
      }).pipe(withOwnTestClock))

    it.effect("polls every 2 seconds by default", () =>
      Effect.gen(function*() {
        const client = yield* LinkcheckClient
        const fake = yield* FakeLinkcheck
        const { id } = yield* client.createBatch(["https://example.org/default-interval"])

        const waiting = yield* Effect.fork(client.waitForBatch(id))
        yield* untilSleeping(1)
        yield* TestClock.adjust("1999 millis")
        expect(yield* fake.readsOf(id)).toBe(1)
        yield* TestClock.adjust("1 millis")
        yield* untilSleeping(1)
        expect(yield* fake.readsOf(id)).toBe(2)

        yield* TestClock.adjust("2 seconds")
        expect((yield* Fiber.join(waiting)).status).toBe("completed")
      }).pipe(withOwnTestClock))

    it.effect("returns a batch that completed at once after a single read", () =>
      Effect.gen(function*() {
        const client = yield* LinkcheckClient
        const fake = yield* FakeLinkcheck
        const { id } = yield* client.createBatch([`${CACHED_PREFIX}wait`])
        const report = yield* client.waitForBatch(id)
        expect(report.status).toBe("completed")
        expect(yield* fake.readsOf(id)).toBe(1)
      }).pipe(withOwnTestClock))

    it.effect("fails with WaitTimeout when the batch is still in progress at the timeout", () =>
      Effect.gen(function*() {
        const client = yield* LinkcheckClient
        const fake = yield* FakeLinkcheck
        const { id } = yield* client.createBatch([NEVER_COMPLETING_URI])

        const waiting = yield* Effect.fork(client.waitForBatch(id, { pollInterval: "2 seconds", timeout: "5 seconds" }))
        for (let read = 1; read <= 3; read++) {
          yield* untilSleeping(2) // the next poll and the timeout
          expect(yield* fake.readsOf(id)).toBe(read)
          yield* TestClock.adjust("2 seconds")
        }

        const error = yield* Effect.flip(Fiber.join(waiting))
        expect(error).toBeInstanceOf(WaitTimeout)
        expect(error).toMatchObject({ batchId: id })
        expect(error.message).toBe(`Batch ${id} did not complete within 5s`)
        expect(yield* fake.readsOf(id)).toBe(3)
      }).pipe(withOwnTestClock))

    it.effect("fails with BatchNotFound for an unknown batch", () =>
      Effect.gen(function*() {
        const client = yield* LinkcheckClient
        const error = yield* Effect.flip(client.waitForBatch(987_655, { timeout: "1 minute" }))
        expect(error).toBeInstanceOf(BatchNotFound)
      }).pipe(withOwnTestClock))
  })
})

describe("LinkcheckClient transport failures", () => {
  const failingFetch = Layer.succeed(FetchHttpClient.Fetch, () => Promise.reject(new TypeError("fetch failed")))
  const ClientWithoutService = LinkcheckClient.layer({ baseUrl: "http://127.0.0.1:9" }).pipe(
    Layer.provide(FetchHttpClient.layer),
    Layer.provide(failingFetch)
  )

  it.effect("wraps a request that never reached the service in LinkcheckClientError", () =>
    Effect.gen(function*() {
      const client = yield* LinkcheckClient
      const error = yield* Effect.flip(client.getBatch(1))
      expect(error).toBeInstanceOf(LinkcheckClientError)
      expect(error).toMatchObject({ reason: "Transport" })
      expect((error as LinkcheckClientError).status).toBeUndefined()
      expect(error.message).toMatch(/^Could not reach the link checking service: .*GET http:\/\/127\.0\.0\.1:9\/batch\/1/)
    }).pipe(Effect.provide(ClientWithoutService)))
})
