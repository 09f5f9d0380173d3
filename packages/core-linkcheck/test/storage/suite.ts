import { describe, expect, it } from "@effect/vitest"
import type { Context, Layer } from "effect"
import { Deferred, Effect, Fiber, Option, TestServices } from "effect"
import type { CheckPriority, CheckResult, ClaimedCheck } from "../../src/domain/check"
import type { ClaimRequest } from "../../src/storage/LinkcheckStore"
import { LinkcheckStore } from "../../src/storage/LinkcheckStore"
import { batchReportJson } from "../../src/storage/reportJson"
import type { StoreUnderTest } from "./backends"
import { SecondCopy } from "./backends"

/** Records one result, as the single-check callers of `completeChecks` do: `None` when the worker no longer holds it. */
const completeOne = (
  store: Context.Tag.Service<LinkcheckStore>,
  input: { readonly id: string; readonly workerId: string; readonly result: CheckResult; readonly now: Date }
) =>
  store.completeChecks({ workerId: input.workerId, now: input.now, results: [{ id: input.id, result: input.result }] }).pipe(
    Effect.map((completed) =>
      completed.recorded.length === 0 ? Option.none() : Option.some({ completedBatches: completed.completedBatches })
    )
  )

const start = new Date("2024-03-01T12:00:00.000Z")
const at = (seconds: number) => new Date(start.getTime() + seconds * 1000)

const ok: CheckResult = {
  status: "ok",
  errors: [],
  warnings: [],
  danger: [],
  problemSummary: null,
  suggestedFix: null
}

const broken: CheckResult = {
  status: "broken",
  errors: ["The page could not be found."],
  warnings: ["This redirects to https://example.org/moved.", "The page took a long time to load."],
  danger: ["This website is on a list of suspicious websites."],
  problemSummary: "Page not found",
  suggestedFix: ""
}

const claimRequest = (overrides: Partial<ClaimRequest> = {}): ClaimRequest => ({
  workerId: "worker-a",
  now: start,
  claimUntil: at(60),
  limit: 100,
  perHost: 100,
  aheadPerHost: 0,
  heldByHost: new Map(),
  lowPriorityQuota: 0,
  workersAliveSince: start,
  ...overrides
})

const claim = (overrides: Partial<ClaimRequest> = {}) =>
  Effect.flatMap(LinkcheckStore, (store) => store.claimChecks(claimRequest(overrides)))

const uris = (claimed: ReadonlyArray<ClaimedCheck>) => claimed.map((check) => check.uri)

/** Pages whose checks read no anchors. */
const pages = (pageUris: ReadonlyArray<string>) => pageUris.map((uri) => ({ uri, readsAnchors: false }))

/** A pending check claimed by `workerId`, as a check run inside a request is. */
const claimedCheck = (uri: string, workerId = "worker-a", now = start) =>
  Effect.flatMap(LinkcheckStore, (store) =>
    store.createCheck({ uri, priority: "high", now, claim: { workerId, until: at(3600) } }))

const newBatch = (
  batchUris: ReadonlyArray<string>,
  options: { priority?: CheckPriority; reuseSince?: Date | null; now?: Date } = {}
) =>
  Effect.flatMap(LinkcheckStore, (store) =>
    store.createBatch({
      uris: batchUris,
      priority: options.priority ?? "high",
      reuseSince: options.reuseSince === undefined ? start : options.reuseSince,
      webhook: null,
      now: options.now ?? start
    }))

/** Claims and completes every check of `ids` (claiming everything claimable on the way). */
const complete = (ids: ReadonlyArray<string>, now: Date, result: CheckResult = ok) =>
  Effect.gen(function*() {
    const store = yield* LinkcheckStore
    yield* store.claimChecks(claimRequest({ workerId: "completer", now, claimUntil: new Date(now.getTime() + 60_000) }))
    return yield* Effect.forEach(ids, (id) => completeOne(store, { id, workerId: "completer", result, now }))
  })

/**
 * Text that does not compress, so the database stores it at full length: a seeded generator, so that a failure
 * can be repeated.
 */
const incompressible = (length: number, seed: number) => {
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
  let state = seed >>> 0
  let text = ""
  for (let i = 0; i < length; i++) {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0
    text += alphabet[(state >>> 16) % alphabet.length]
  }
  return text
}

/** A uri of exactly `length` characters, its path random. */
const longUri = (length: number, seed: number) => {
  const prefix = "https://long.example/"
  return prefix + incompressible(length - prefix.length, seed)
}

export const linkcheckStoreSuite = (name: string, makeLayer: () => Layer.Layer<StoreUnderTest, unknown>) => {
  const test = (title: string, body: () => Effect.Effect<void, unknown, StoreUnderTest>, timeout?: number) =>
    it.effect(title, () => Effect.suspend(body).pipe(Effect.provide(makeLayer())), timeout)

  describe(`LinkcheckStore on ${name}`, () => {
    describe("findCheck", () => {
      test("finds the newest check of a uri created within the window", () =>
        Effect.gen(function*() {
          const store = yield* LinkcheckStore
          expect(yield* store.findCheck("https://example.com/", { since: start, completedOnly: false })).toEqual(
            Option.none()
          )
          yield* store.createCheck({ uri: "https://example.com/", priority: "high", now: start })
          const newer = yield* store.createCheck({ uri: "https://example.com/", priority: "low", now: at(10) })
          yield* store.createCheck({ uri: "https://example.com/other", priority: "high", now: at(20) })

          const found = yield* store.findCheck("https://example.com/", { since: start, completedOnly: false })
          expect(found).toEqual(Option.some(newer))
          expect(newer).toEqual({
            id: newer.id,
            uri: "https://example.com/",
            priority: "low",
            createdAt: at(10),
            completedAt: null,
            result: null,
            anchors: null
          })
          expect(yield* store.findCheck("https://example.com/", { since: at(10), completedOnly: false })).toEqual(
            Option.some(newer)
          )
          expect(yield* store.findCheck("https://example.com/", { since: at(11), completedOnly: false })).toEqual(
            Option.none()
          )
        }))

      test("with completedOnly skips newer pending checks", () =>
        Effect.gen(function*() {
          const store = yield* LinkcheckStore
          const older = yield* claimedCheck("https://example.com/")
          yield* completeOne(store, { id: older.id, workerId: "worker-a", result: broken, now: at(5) })
          const pending = yield* store.createCheck({ uri: "https://example.com/", priority: "high", now: at(10) })

          const completed = yield* store.findCheck("https://example.com/", { since: start, completedOnly: true })
          expect(completed).toEqual(Option.some({
            id: older.id,
            uri: "https://example.com/",
            priority: "high",
            createdAt: start,
            completedAt: at(5),
            result: broken,
            anchors: null
          }))
          expect(Option.map(
            yield* store.findCheck("https://example.com/", { since: start, completedOnly: false }),
            (check) => check.id
          )).toEqual(Option.some(pending.id))
          expect(yield* store.findCheck("https://example.com/", { since: at(1), completedOnly: true })).toEqual(
            Option.none()
          )
        }))
    })

    describe("createChecks", () => {
      test("creates one pending check per uri that has none within the window, and returns those", () =>
        Effect.gen(function*() {
          const store = yield* LinkcheckStore
          yield* store.createCheck({ uri: "https://old.example/", priority: "high", now: start })
          const recent = yield* store.createCheck({ uri: "https://recent.example/", priority: "high", now: at(50) })

          const created = yield* store.createChecks({
            pages: pages(["https://new.example/", "https://old.example/", "https://recent.example/", "https://new.example/"]),
            priority: "low",
            reuseSince: at(10),
            now: at(60)
          })
          expect(created.map((check) => check.uri).sort()).toEqual(["https://new.example/", "https://old.example/"])
          for (const check of created) {
            expect(check).toEqual({
              id: check.id,
              uri: check.uri,
              priority: "low",
              createdAt: at(60),
              completedAt: null,
              result: null,
              anchors: null
            })
            expect(yield* store.findCheck(check.uri, { since: at(60), completedOnly: false })).toEqual(
              Option.some(check)
            )
          }
          expect(yield* store.findCheck("https://recent.example/", { since: at(10), completedOnly: false })).toEqual(
            Option.some(recent)
          )
        }))

      test("without a window creates a check for every uri, once each", () =>
        Effect.gen(function*() {
          const store = yield* LinkcheckStore
          const earlier = yield* store.createCheck({ uri: "https://a.example/", priority: "high", now: at(50) })
          const created = yield* store.createChecks({
            pages: pages(["https://a.example/", "https://b.example/", "https://a.example/"]),
            priority: "high",
            reuseSince: null,
            now: at(60)
          })
          expect(created.map((check) => check.uri).sort()).toEqual(["https://a.example/", "https://b.example/"])
          expect(created.map((check) => check.id)).not.toContain(earlier.id)
          expect(yield* store.createChecks({ pages: [], priority: "high", reuseSince: null, now: at(60) })).toEqual([])
        }))

      test("a batch written afterwards takes up the checks created since it was asked for", () =>
        Effect.gen(function*() {
          const store = yield* LinkcheckStore
          const [first] = yield* store.createChecks({
            pages: pages(["https://first.example/"]),
            priority: "high",
            reuseSince: null,
            now: at(60)
          })
          const batch = yield* store.createBatch({
            uris: ["https://first.example/", "https://second.example/"],
            priority: "high",
            reuseSince: at(60),
            webhook: null,
            now: at(60)
          })
          expect(batch.checks[0]!.id).toBe(first!.id)
          expect(batch.checks[1]!.id).not.toBe(first!.id)
        }))
    })

    describe("createBatch", () => {
      test("keeps the order of the uris and gives a uri given twice one check", () =>
        Effect.gen(function*() {
          const store = yield* LinkcheckStore
          const batch = yield* store.createBatch({
            uris: ["https://b.example/", "https://a.example/", "https://b.example/", "mailto:someone@example.com"],
            priority: "low",
            reuseSince: null,
            webhook: { uri: "https://hooks.example/done", secretToken: "s3cret" },
            now: start
          })
          expect(batch.checks.map((check) => check.uri)).toEqual([
            "https://b.example/",
            "https://a.example/",
            "https://b.example/",
            "mailto:someone@example.com"
          ])
          expect(batch.checks[0]!.id).toBe(batch.checks[2]!.id)
          expect(new Set(batch.checks.map((check) => check.id)).size).toBe(3)
          expect(batch.checks.every((check) => check.priority === "low" && check.completedAt === null)).toBe(true)
          expect(batch.completedAt).toBeNull()
          expect(batch.createdAt).toEqual(start)
          expect(batch.webhook).toEqual({ uri: "https://hooks.example/done", secretToken: "s3cret" })
          expect(yield* store.findBatch(batch.id)).toEqual(Option.some(batch))
        }))

      test("finds a batch for its owner, and one without an owner only when no owner is asked for", () =>
        Effect.gen(function*() {
          const store = yield* LinkcheckStore
          const owned = yield* store.createBatch({
            uris: ["https://owned.example/"],
            priority: "high",
            reuseSince: null,
            webhook: null,
            owner: "user-a",
            now: start
          })
          const ownerless = yield* store.createBatch({
            uris: ["https://ownerless.example/"],
            priority: "high",
            reuseSince: null,
            webhook: null,
            now: start
          })
          expect(owned.owner).toBe("user-a")
          expect(ownerless.owner).toBeNull()
          expect(yield* store.findBatch(owned.id, "user-a")).toEqual(Option.some(owned))
          expect(yield* store.findBatch(owned.id, "user-b")).toEqual(Option.none())
          expect(yield* store.findBatch(owned.id)).toEqual(Option.some(owned))
          expect(yield* store.findBatch(ownerless.id, "user-a")).toEqual(Option.none())
          expect(yield* store.findBatch(ownerless.id)).toEqual(Option.some(ownerless))
        }))

      test("reuses pending and completed checks within the window and creates the others", () =>
        Effect.gen(function*() {
          const store = yield* LinkcheckStore
          const tooOld = yield* store.createCheck({ uri: "https://old.example/", priority: "high", now: start })
          const done = yield* claimedCheck("https://done.example/", "worker-a", at(100))
          yield* completeOne(store, { id: done.id, workerId: "worker-a", result: ok, now: at(110) })
          const waiting = yield* store.createCheck({ uri: "https://waiting.example/", priority: "high", now: at(120) })

          const batch = yield* newBatch(
            ["https://old.example/", "https://done.example/", "https://waiting.example/", "https://new.example/"],
            { reuseSince: at(50), now: at(200) }
          )
          const [old, reusedDone, reusedWaiting, created] = batch.checks
          expect(old!.id).not.toBe(tooOld.id)
          expect(old!.createdAt).toEqual(at(200))
          expect(reusedDone!.id).toBe(done.id)
          expect(reusedDone!.result).toEqual(ok)
          expect(reusedWaiting!.id).toBe(waiting.id)
          expect(created!.completedAt).toBeNull()
          expect(batch.completedAt).toBeNull()
        }))

      test("with reuseSince null creates every check anew", () =>
        Effect.gen(function*() {
          const store = yield* LinkcheckStore
          const existing = yield* store.createCheck({ uri: "https://example.com/", priority: "high", now: start })
          const batch = yield* newBatch(["https://example.com/", "https://example.com/"], {
            reuseSince: null,
            now: at(1)
          })
          expect(batch.checks[0]!.id).not.toBe(existing.id)
          expect(batch.checks[1]!.id).toBe(batch.checks[0]!.id)
        }))

      test("a batch whose links all have results is completed when its last link finished", () =>
        Effect.gen(function*() {
          const store = yield* LinkcheckStore
          const first = yield* claimedCheck("https://one.example/")
          const second = yield* claimedCheck("https://two.example/")
          yield* completeOne(store, { id: second.id, workerId: "worker-a", result: broken, now: at(30) })
          yield* completeOne(store, { id: first.id, workerId: "worker-a", result: ok, now: at(20) })

          const batch = yield* newBatch(["https://one.example/", "https://two.example/", "https://one.example/"], {
            now: at(100)
          })
          expect(batch.completedAt).toEqual(at(30))
          expect(batch.checks.map((check) => check.result?.status)).toEqual(["ok", "broken", "ok"])
          expect(Option.map(yield* store.findBatch(batch.id), (found) => found.completedAt)).toEqual(
            Option.some(at(30))
          )
        }))

      test("a high priority batch raises the priority of the pending checks it reuses", () =>
        Effect.gen(function*() {
          yield* newBatch(["https://bulk.example/1", "https://bulk.example/2"], { priority: "low" })
          const urgent = yield* newBatch(["https://bulk.example/2"], { priority: "high", now: at(1) })
          expect(urgent.checks[0]!.priority).toBe("high")
          const claimed = yield* claim({ limit: 1 })
          expect(uris(claimed)).toEqual(["https://bulk.example/2"])
          expect(claimed[0]!.priority).toBe("high")
        }))

      test("creates and reads back a batch of 5000 links", () =>
        Effect.gen(function*() {
          const store = yield* LinkcheckStore
          const earlier = yield* newBatch(
            Array.from({ length: 1000 }, (_, i) => `https://host${i % 50}.example/page/${i}`)
          )
          const batchUris = Array.from({ length: 5000 }, (_, i) => `https://host${i % 50}.example/page/${i % 4000}`)
          const batch = yield* newBatch(batchUris, { now: at(1) })
          expect(batch.checks.map((check) => check.uri)).toEqual(batchUris)
          expect(batch.checks.slice(0, 1000).map((check) => check.id)).toEqual(earlier.checks.map((check) => check.id))
          expect(new Set(batch.checks.map((check) => check.id)).size).toBe(4000)
          expect(yield* store.findBatch(batch.id)).toEqual(Option.some(batch))
        }), 60_000)

      test("findBatch of an unknown id is none", () =>
        Effect.gen(function*() {
          const store = yield* LinkcheckStore
          expect(yield* store.findBatch(12345)).toEqual(Option.none())
          expect(yield* store.findBatch(1.5)).toEqual(Option.none())
        }))
    })

    describe("createAndClaimChecks", () => {
      const createAndClaim = (pageUris: ReadonlyArray<string>, overrides: Partial<ClaimRequest> = {}, reuseSince: Date | null = null) =>
        Effect.flatMap(LinkcheckStore, (store) =>
          store.createAndClaimChecks({
            pages: pageUris.map((uri) => ({ uri, readsAnchors: uri.includes("guide") })),
            priority: "high",
            reuseSince,
            now: start,
            claim: claimRequest(overrides)
          }))

      test("claims each host's first new checks within its allowance and the limit; the rest wait for any claim", () =>
        Effect.gen(function*() {
          const store = yield* LinkcheckStore
          const pageUris = [
            "https://a.example/1",
            "https://b.example/guide",
            "https://a.example/2",
            "https://a.example/3",
            "https://c.example/1",
            "https://d.example/1"
          ]
          const written = yield* createAndClaim(pageUris, { perHost: 2, limit: 4 })
          expect(written.created.map((check) => check.uri)).toEqual(pageUris)
          expect(written.claimed).toEqual([
            { id: written.created[0]!.id, uri: "https://a.example/1", host: "a.example", priority: "high", attempts: 1, readsAnchors: false },
            { id: written.created[1]!.id, uri: "https://b.example/guide", host: "b.example", priority: "high", attempts: 1, readsAnchors: true },
            { id: written.created[2]!.id, uri: "https://a.example/2", host: "a.example", priority: "high", attempts: 1, readsAnchors: false },
            { id: written.created[4]!.id, uri: "https://c.example/1", host: "c.example", priority: "high", attempts: 1, readsAnchors: false }
          ])
          expect(yield* store.workload(start)).toEqual({ pending: 6, claimed: 4, oldestClaimAt: start })
          // another worker finds host a at its limit, and takes what was left of the others
          expect(uris(yield* claim({ workerId: "worker-b", perHost: 2 }))).toEqual(["https://d.example/1"])
          // the claims are the worker's own: it records their results
          const completed = yield* store.completeChecks({
            workerId: "worker-a",
            now: at(1),
            results: written.claimed.map(({ id }) => ({ id, result: ok }))
          })
          expect([...completed.recorded].sort()).toEqual(written.claimed.map(({ id }) => id).sort())
        }))

      test("counts what the worker and the other workers already hold of a host", () =>
        Effect.gen(function*() {
          yield* claimedCheck("https://busy.example/in-a-request", "worker-x")
          const written = yield* createAndClaim(
            ["https://busy.example/1", "https://busy.example/2", "https://held.example/1", "https://held.example/2"],
            { perHost: 2, heldByHost: new Map([["held.example", 1]]) }
          )
          expect(uris(written.claimed)).toEqual(["https://busy.example/1", "https://held.example/1"])
        }))

      test("claims none of a page that already has a check in the window, and none at all with a limit of 0", () =>
        Effect.gen(function*() {
          const store = yield* LinkcheckStore
          const earlier = yield* store.createCheck({ uri: "https://a.example/", priority: "high", now: start })
          const written = yield* createAndClaim(["https://a.example/", "https://b.example/"], {}, start)
          expect(written.created.map((check) => check.uri)).toEqual(["https://b.example/"])
          expect(uris(written.claimed)).toEqual(["https://b.example/"])
          expect(written.created.map((check) => check.id)).not.toContain(earlier.id)
          const none = yield* createAndClaim(["https://c.example/"], { limit: 0 })
          expect(none.created.map((check) => check.uri)).toEqual(["https://c.example/"])
          expect(none.claimed).toEqual([])
        }))

      test("claims none while another worker is alive, so that the workers share the checks out through their claims", () =>
        Effect.gen(function*() {
          const store = yield* LinkcheckStore
          for (const workerId of ["worker-a", "worker-b"]) {
            yield* store.heartbeat({ workerId, hostname: workerId, pid: 1, now: start, holding: [], claimUntil: at(30) })
          }
          const written = yield* createAndClaim(["https://a.example/1", "https://b.example/1"])
          expect(written.created).toHaveLength(2)
          expect(written.claimed).toEqual([])
        }))

      test("createAndClaimBatch claims the checks the batch creates as createAndClaimChecks does, none it reuses", () =>
        Effect.gen(function*() {
          const store = yield* LinkcheckStore
          const reused = yield* store.createCheck({ uri: "https://a.example/reused", priority: "low", now: start })
          const { batch, claimed } = yield* store.createAndClaimBatch({
            uris: ["https://a.example/reused", "https://a.example/1", "https://a.example/2", "https://b.example/1#part"],
            priority: "high",
            reuseSince: start,
            webhook: null,
            now: start,
            claim: claimRequest({ perHost: 1, limit: 5, heldByHost: new Map([["b.example", 0]]) })
          })
          expect(batch.checks[0]!.id).toBe(reused.id)
          expect(claimed).toEqual([
            { id: batch.checks[1]!.id, uri: "https://a.example/1", host: "a.example", priority: "high", attempts: 1, readsAnchors: false },
            { id: batch.checks[3]!.id, uri: "https://b.example/1", host: "b.example", priority: "high", attempts: 1, readsAnchors: false }
          ])
          expect(yield* store.findBatch(batch.id)).toEqual(Option.some(batch))
          // the reused check and a.example/2 wait for a claim
          expect(uris(yield* claim({ workerId: "worker-b", perHost: 3 }))).toEqual([
            "https://a.example/reused",
            "https://a.example/2"
          ])
        }))
    })

    describe("claimChecks", () => {
      test("claims high priority first and hands the low quota to low priority first", () =>
        Effect.gen(function*() {
          yield* newBatch(["https://l1.example/", "https://l2.example/"], { priority: "low" })
          yield* newBatch(["https://h1.example/", "https://h2.example/"], { priority: "high" })

          expect(uris(yield* claim({ limit: 2, lowPriorityQuota: 0 }))).toEqual([
            "https://h1.example/",
            "https://h2.example/"
          ])
          expect(uris(yield* claim({ limit: 2, lowPriorityQuota: 0 }))).toEqual([
            "https://l1.example/",
            "https://l2.example/"
          ])
        }))

      test("the low quota is taken from low priority before high", () =>
        Effect.gen(function*() {
          yield* newBatch(["https://l1.example/", "https://l2.example/"], { priority: "low" })
          yield* newBatch(["https://h1.example/", "https://h2.example/", "https://h3.example/"], { priority: "high" })

          const claimed = yield* claim({ limit: 3, lowPriorityQuota: 1 })
          expect(uris(claimed)).toEqual(["https://h1.example/", "https://h2.example/", "https://l1.example/"])
          expect(claimed.map((check) => check.priority)).toEqual(["high", "high", "low"])
          expect(uris(yield* claim({ limit: 5, lowPriorityQuota: 5 }))).toEqual([
            "https://h3.example/",
            "https://l2.example/"
          ])
        }))

      test("never claims more of a host than its limit leaves, counting what every worker holds", () =>
        Effect.gen(function*() {
          yield* claimedCheck("https://busy.example/in-a-request", "worker-x")
          yield* newBatch(Array.from({ length: 5 }, (_, i) => `https://Busy.Example/${i}`), { priority: "low" })
          yield* newBatch(["https://busy.example/urgent", "https://quiet.example/"], { priority: "high" })

          const claimed = yield* claim({ perHost: 3, lowPriorityQuota: 1 })
          expect(uris(claimed)).toEqual([
            "https://busy.example/urgent",
            "https://quiet.example/",
            "https://Busy.Example/0"
          ])
          expect(claimed.map((check) => check.host)).toEqual(["busy.example", "quiet.example", "busy.example"])
          expect(yield* claim({ perHost: 3, workerId: "worker-b" })).toEqual([])
          expect(uris(yield* claim({ perHost: 4, workerId: "worker-b" }))).toEqual(["https://Busy.Example/1"])
          // once the batch's claims expire only the request's check still counts
          expect(uris(yield* claim({ perHost: 3, now: at(61), claimUntil: at(120) }))).toEqual([
            "https://busy.example/urgent",
            "https://quiet.example/",
            "https://Busy.Example/0"
          ])
        }))

      test("subdomains and ports of one registrable domain are claimed under one limit, other domains under theirs", () =>
        Effect.gen(function*() {
          yield* claimedCheck("https://www.site.co.uk:8443/in-a-request", "worker-x")
          yield* newBatch([
            "https://site.co.uk/1",
            "http://a.site.co.uk:8080/2",
            "https://b.c.site.co.uk/3",
            "https://other.co.uk/1",
            "http://127.0.0.1:8080/1",
            "http://127.0.0.1:9090/2"
          ])

          const claimed = yield* claim({ perHost: 2 })
          expect(uris(claimed)).toEqual([
            "https://site.co.uk/1",
            "https://other.co.uk/1",
            "http://127.0.0.1:8080/1",
            "http://127.0.0.1:9090/2"
          ])
          expect(claimed.map((check) => check.host)).toEqual([
            "site.co.uk",
            "other.co.uk",
            "127.0.0.1",
            "127.0.0.1"
          ])
          expect(yield* claim({ perHost: 2, workerId: "worker-b" })).toEqual([])
        }))

      test("claims ahead of a host's limit only while no other worker holds it, counting its own by its own count", () =>
        Effect.gen(function*() {
          yield* newBatch(Array.from({ length: 8 }, (_, i) => `https://alone.example/${i}`))
          yield* newBatch(Array.from({ length: 8 }, (_, i) => `https://shared.example/${i}`))
          yield* claimedCheck("https://shared.example/in-a-request", "worker-x")

          const first = yield* claim({ perHost: 2, aheadPerHost: 2 })
          expect(first.filter((check) => check.host === "alone.example")).toHaveLength(4)
          expect(first.filter((check) => check.host === "shared.example")).toHaveLength(1)

          // two of alone.example finished: the worker's own count says 2, though the store still has 4 claimed by it
          const held = new Map([["alone.example", 2], ["shared.example", 1]])
          const second = yield* claim({ perHost: 2, aheadPerHost: 2, heldByHost: held })
          expect(uris(second)).toEqual(["https://alone.example/4", "https://alone.example/5"])
          expect(yield* claim({ perHost: 2, aheadPerHost: 2, workerId: "worker-b" })).toEqual([])
        }))

      test("two copies claiming one host at once together take no more than its limit", () =>
        Effect.gen(function*() {
          yield* newBatch(Array.from({ length: 20 }, (_, i) => `https://one.example/${i}`))
          const claimFrom = (store: Context.Tag.Service<LinkcheckStore>, workerId: string) =>
            store.claimChecks(claimRequest({ workerId, limit: 10, perHost: 4 }))
          const [first, second] = yield* Effect.all([
            claimFrom(yield* LinkcheckStore, "copy-1"),
            claimFrom(yield* SecondCopy, "copy-2")
          ], { concurrency: 2 })
          expect(first.length + second.length).toBe(4)
        }))

      test("a claim holds a check until it expires; then another worker takes it over", () =>
        Effect.gen(function*() {
          const store = yield* LinkcheckStore
          const [check] = (yield* newBatch(["https://example.com/"])).checks
          const first = yield* claim({ workerId: "worker-a", claimUntil: at(60) })
          expect(first).toEqual([{
            id: check!.id,
            uri: "https://example.com/",
            host: "example.com",
            priority: "high",
            attempts: 1,
            readsAnchors: false
          }])
          expect(yield* claim({ workerId: "worker-b", now: at(60) })).toEqual([])

          const second = yield* claim({ workerId: "worker-b", now: at(61), claimUntil: at(120) })
          expect(second.map((claimed) => [claimed.id, claimed.attempts])).toEqual([[check!.id, 2]])

          const late = yield* completeOne(store, { id: check!.id, workerId: "worker-a", result: ok, now: at(62) })
          expect(late).toEqual(Option.none())
          const pending = yield* store.findCheck("https://example.com/", { since: start, completedOnly: true })
          expect(pending).toEqual(Option.none())
          const done = yield* completeOne(store, { id: check!.id, workerId: "worker-b", result: ok, now: at(63) })
          expect(Option.isSome(done)).toBe(true)
          expect(yield* claim({ workerId: "worker-c", now: at(500) })).toEqual([])
        }))

      test("a check created with a claim is held by its worker", () =>
        Effect.gen(function*() {
          const store = yield* LinkcheckStore
          const check = yield* store.createCheck({
            uri: "https://example.com/",
            priority: "high",
            now: start,
            claim: { workerId: "request-1", until: at(30) }
          })
          expect(yield* claim({ now: at(29) })).toEqual([])
          expect(yield* claim({ now: at(31) })).toEqual([{
            id: check.id,
            uri: "https://example.com/",
            host: "example.com",
            priority: "high",
            attempts: 2,
            readsAnchors: false
          }])
        }))

      test("a limit of 0 claims nothing", () =>
        Effect.gen(function*() {
          yield* newBatch(["https://example.com/"])
          expect(yield* claim({ limit: 0, lowPriorityQuota: 3 })).toEqual([])
          expect(uris(yield* claim({ limit: 1 }))).toEqual(["https://example.com/"])
        }))

      test("two copies claiming at once never get the same check", () =>
        Effect.gen(function*() {
          const batch = yield* newBatch(Array.from({ length: 60 }, (_, i) => `https://site${i}.example/`))
          const claimUntilEmpty = (store: Context.Tag.Service<LinkcheckStore>, workerId: string) =>
            Effect.gen(function*() {
              const taken: Array<string> = []
              while (true) {
                const claimed = yield* store.claimChecks(claimRequest({ workerId, limit: 7 }))
                if (claimed.length === 0) return taken
                taken.push(...claimed.map((check) => check.id))
              }
            })
          const [first, second] = yield* Effect.all([
            claimUntilEmpty(yield* LinkcheckStore, "copy-1"),
            claimUntilEmpty(yield* SecondCopy, "copy-2")
          ], { concurrency: 2 })
          const all = [...first, ...second]
          expect(new Set(all).size).toBe(all.length)
          expect(new Set(all)).toEqual(new Set(batch.checks.map((check) => check.id)))
        }))
    })

    describe("releaseClaims and extendClaims", () => {
      test("released checks are claimable again at once and the attempt is not counted", () =>
        Effect.gen(function*() {
          const store = yield* LinkcheckStore
          const batch = yield* newBatch(["https://one.example/", "https://two.example/"])
          const [one, two] = batch.checks.map((check) => check.id)
          yield* claim({ workerId: "worker-a" })
          yield* store.releaseClaims("worker-b", [one!])
          expect(yield* claim({ workerId: "worker-b" })).toEqual([])

          yield* store.releaseClaims("worker-a", [one!])
          const again = yield* claim({ workerId: "worker-b" })
          expect(again.map((check) => [check.id, check.attempts])).toEqual([[one, 1]])
          expect(yield* completeOne(store, { id: one!, workerId: "worker-a", result: ok, now: at(1) })).toEqual(
            Option.none()
          )
          expect(Option.isSome(yield* completeOne(store, { id: two!, workerId: "worker-a", result: ok, now: at(1) })))
            .toBe(true)
        }))

      test("extended claims are held until the new time; others' extensions change nothing", () =>
        Effect.gen(function*() {
          const store = yield* LinkcheckStore
          const [one, two] = (yield* newBatch(["https://one.example/", "https://two.example/"])).checks.map((c) => c.id)
          yield* claim({ workerId: "worker-a", claimUntil: at(60) })
          yield* store.extendClaims("worker-a", [one!], at(120))
          yield* store.extendClaims("worker-b", [two!], at(120))
          expect((yield* claim({ workerId: "worker-b", now: at(90), claimUntil: at(200) })).map((check) => check.id))
            .toEqual([two])
          expect(yield* claim({ workerId: "worker-c", now: at(120) })).toEqual([])
          expect((yield* claim({ workerId: "worker-c", now: at(121) })).map((check) => check.id)).toEqual([one])
        }))
    })

    describe("workers", () => {
      const beat = (
        workerId: string,
        now: Date,
        overrides: { hostname?: string; pid?: number; holding?: ReadonlyArray<string> } = {}
      ) =>
        Effect.flatMap(LinkcheckStore, (store) =>
          store.heartbeat({
            workerId,
            hostname: overrides.hostname ?? "host-1",
            pid: overrides.pid ?? 100,
            now,
            holding: overrides.holding ?? [],
            claimUntil: new Date(now.getTime() + 30_000)
          }))

      test("a heartbeat renews the claims its worker is working on and hands back the others in its name", () =>
        Effect.gen(function*() {
          const [one] = (yield* newBatch(["https://one.example/"])).checks.map((check) => check.id)
          const [lost] = (yield* newBatch(["https://lost.example/"], { reuseSince: null })).checks.map((check) => check.id)
          yield* newBatch(["https://two.example/"], { reuseSince: null })
          yield* claim({ workerId: "worker-a", limit: 2, claimUntil: at(30) })
          yield* beat("worker-a", at(25), { holding: [one!] })
          expect((yield* claim({ workerId: "worker-d", now: at(26), limit: 1 })).map((check) => check.id)).toEqual([lost])
          expect((yield* claim({ workerId: "worker-c", now: at(50), claimUntil: at(200) })).map((check) => check.uri))
            .toEqual(["https://two.example/"])
          expect(yield* claim({ workerId: "worker-c", now: at(55) })).toEqual([])
          expect((yield* claim({ workerId: "worker-c", now: at(56) })).map((check) => check.id)).toEqual([one])
        }))

      test("retired workers are forgotten and their checks are claimable at once", () =>
        Effect.gen(function*() {
          const store = yield* LinkcheckStore
          yield* newBatch(["https://one.example/", "https://two.example/"])
          const held = yield* claim({ workerId: "earlier-life", claimUntil: at(3600) })
          yield* beat("earlier-life", at(0), { pid: 1, holding: held.map((check) => check.id) })
          yield* beat("elsewhere", at(0), { hostname: "host-2", pid: 1 })
          expect(yield* store.workersOn("host-1")).toEqual([{ id: "earlier-life", pid: 1 }])
          expect(yield* claim({ workerId: "worker-b", now: at(1) })).toEqual([])

          yield* store.retireWorkers(["earlier-life"])
          expect(yield* store.workersOn("host-1")).toEqual([])
          const reclaimed = yield* claim({ workerId: "worker-b", now: at(1) })
          expect(reclaimed.map((check) => check.uri)).toEqual(["https://one.example/", "https://two.example/"])
        }))

      test("the workload counts pending and claimed checks and tells when the oldest live claim was taken", () =>
        Effect.gen(function*() {
          const store = yield* LinkcheckStore
          expect(yield* store.workload(start)).toEqual({ pending: 0, claimed: 0, oldestClaimAt: null })
          yield* newBatch(["https://one.example/", "https://two.example/", "https://three.example/"])
          yield* claim({ workerId: "worker-a", limit: 1, now: at(10), claimUntil: at(40) })
          yield* claim({ workerId: "worker-b", limit: 1, now: at(20), claimUntil: at(50) })
          expect(yield* store.workload(at(30))).toEqual({ pending: 3, claimed: 2, oldestClaimAt: at(10) })
          expect(yield* store.workload(at(45))).toEqual({ pending: 3, claimed: 1, oldestClaimAt: at(20) })
        }))

      test("while several workers are alive each takes its share of a host and none claims ahead", () =>
        Effect.gen(function*() {
          yield* newBatch(Array.from({ length: 12 }, (_, n) => `https://shared.example/${n}`))
          const request = { perHost: 4, aheadPerHost: 4, workersAliveSince: at(0), now: at(5), claimUntil: at(60) }
          yield* beat("worker-a", at(1))
          expect(yield* claim({ ...request, workerId: "worker-a" })).toHaveLength(8)
          yield* beat("worker-b", at(2))
          yield* beat("worker-c", at(3), { hostname: "host-2" })
          expect(yield* claim({ ...request, workerId: "worker-b" })).toHaveLength(0)
          yield* Effect.flatMap(LinkcheckStore, (store) => store.retireWorkers(["worker-a"]))
          expect(yield* claim({ ...request, workerId: "worker-b" })).toHaveLength(2)
          expect(yield* claim({ ...request, workerId: "worker-c" })).toHaveLength(2)
        }))
    })

    describe("completeChecks", () => {
      test("records the result only for the worker holding the claim, once", () =>
        Effect.gen(function*() {
          const store = yield* LinkcheckStore
          const check = yield* claimedCheck("https://example.com/", "worker-a")
          expect(yield* completeOne(store, { id: check.id, workerId: "worker-b", result: ok, now: at(1) })).toEqual(
            Option.none()
          )
          expect(yield* completeOne(store, { id: check.id, workerId: "worker-a", result: broken, now: at(2) }))
            .toEqual(Option.some({ completedBatches: [] }))
          expect(yield* completeOne(store, { id: check.id, workerId: "worker-a", result: ok, now: at(3) })).toEqual(
            Option.none()
          )
          expect(yield* completeOne(store, { id: "999999", workerId: "worker-a", result: ok, now: at(3) })).toEqual(
            Option.none()
          )
          expect(yield* completeOne(store, { id: "not-an-id", workerId: "worker-a", result: ok, now: at(3) }))
            .toEqual(Option.none())
          const found = yield* store.findCheck("https://example.com/", { since: start, completedOnly: true })
          expect(Option.map(found, (record) => [record.completedAt, record.result])).toEqual(
            Option.some([at(2), broken])
          )
        }))

      test("an unclaimed check cannot be completed", () =>
        Effect.gen(function*() {
          const store = yield* LinkcheckStore
          const check = yield* store.createCheck({ uri: "https://example.com/", priority: "high", now: start })
          expect(yield* completeOne(store, { id: check.id, workerId: "worker-a", result: ok, now: at(1) })).toEqual(
            Option.none()
          )
        }))

      test("records many results in one step, skipping those the worker does not hold, and completes their batches", () =>
        Effect.gen(function*() {
          const store = yield* LinkcheckStore
          const first = yield* newBatch(["https://a.example/", "https://b.example/"])
          const second = yield* newBatch(["https://b.example/", "https://c.example/"])
          const claimed = yield* store.claimChecks(claimRequest({ workerId: "worker-a", now: start, claimUntil: at(60) }))
          const idOf = (uri: string) => claimed.find((check) => check.uri === uri)!.id
          const elsewhere = yield* claimedCheck("https://d.example/", "worker-b")
          const completed = yield* store.completeChecks({
            workerId: "worker-a",
            now: at(5),
            results: [
              { id: idOf("https://a.example/"), result: ok },
              { id: idOf("https://b.example/"), result: broken },
              { id: elsewhere.id, result: ok }
            ]
          })
          expect([...completed.recorded].sort()).toEqual([idOf("https://a.example/"), idOf("https://b.example/")].sort())
          expect(completed.completedBatches).toEqual([{ id: first.id, webhook: null, traceParent: null }])
          const secondNow = yield* store.findBatch(second.id)
          expect(Option.map(secondNow, (batch) => batch.completedAt)).toEqual(Option.some(null))
          const untouched = yield* store.findCheck("https://d.example/", { since: start, completedOnly: true })
          expect(untouched).toEqual(Option.none())
        }))

      test("completes a batch with its last pending link, counting a uri given twice once", () =>
        Effect.gen(function*() {
          const store = yield* LinkcheckStore
          const webhook = { uri: "https://hooks.example/batch", secretToken: null }
          const traceParent = `00-${"1".repeat(32)}-${"2".repeat(16)}-01`
          const batch = yield* store.createBatch({
            uris: ["https://a.example/", "https://b.example/", "https://a.example/"],
            priority: "high",
            reuseSince: start,
            webhook,
            traceParent,
            now: start
          })
          const other = yield* newBatch(["https://a.example/"], { now: at(1) })
          const [a, b] = batch.checks.map((check) => check.id)

          const [afterA, afterB] = yield* complete([a!, b!], at(10))
          expect(afterA).toEqual(Option.some({ completedBatches: [{ id: other.id, webhook: null, traceParent: null }] }))
          expect(afterB).toEqual(Option.some({ completedBatches: [{ id: batch.id, webhook, traceParent }] }))
          const found = Option.getOrThrow(yield* store.findBatch(batch.id))
          expect(found.completedAt).toEqual(at(10))
          expect(found.checks.map((check) => check.result?.status)).toEqual(["ok", "ok", "ok"])
        }))

      test("a batch is reported completed exactly once when its checks complete concurrently", () =>
        Effect.gen(function*() {
          const batches = yield* Effect.forEach(
            Array.from({ length: 10 }, (_, i) => i),
            (i) => newBatch([`https://x${i}.example/`, `https://y${i}.example/`, `https://x${i}.example/`])
          )
          const claimed = yield* claim()
          expect(claimed).toHaveLength(20)
          const copies = [yield* LinkcheckStore, yield* SecondCopy]
          const results = yield* Effect.forEach(
            claimed,
            (check, i) => completeOne(copies[i % 2]!, { id: check.id, workerId: "worker-a", result: ok, now: at(5) }),
            { concurrency: "unbounded" }
          )
          const completedIds = results.flatMap((result) =>
            Option.getOrThrow(result).completedBatches.map((batch) => batch.id)
          )
          expect(completedIds.sort((x, y) => x - y)).toEqual(batches.map((batch) => batch.id))
        }))

      test("a batch reusing a check that completes meanwhile still completes", () =>
        Effect.gen(function*() {
          const store = yield* LinkcheckStore
          const second = yield* SecondCopy
          const checks = yield* Effect.forEach(
            Array.from({ length: 20 }, (_, i) => `https://race${i}.example/`),
            (uri) => claimedCheck(uri)
          )
          const outcomes = yield* Effect.forEach(checks, (check) =>
            Effect.all([
              second.createBatch({ uris: [check.uri], priority: "high", reuseSince: start, webhook: null, now: at(1) }),
              completeOne(store, { id: check.id, workerId: "worker-a", result: ok, now: at(1) })
            ], { concurrency: 2 }).pipe(Effect.map(([batch, completion]) => ({ check, batch, completion }))))
          for (const { batch, check, completion } of outcomes) {
            expect(batch.checks.map((reused) => reused.id)).toEqual([check.id])
            expect(Option.getOrThrow(yield* store.findBatch(batch.id)).completedAt).toEqual(at(1))
            const completedByCheck = Option.getOrThrow(completion).completedBatches.some((b) => b.id === batch.id)
            expect(completedByCheck).toBe(batch.completedAt === null)
          }
        }))
    })

    describe("long values", () => {
      describe.each([
        ["3,000", 3_000],
        ["1 MB", 1_000_000]
      ])("a uri of %s characters", (_, length) => {
        test("is stored by a check, found again and reused within the window", () =>
          Effect.gen(function*() {
            const store = yield* LinkcheckStore
            const uri = longUri(length, 1)
            const sharingItsStart = `${uri.slice(0, -1)}!`
            const check = yield* store.createCheck({ uri, priority: "high", now: start })
            expect(check.uri).toBe(uri)
            expect(yield* store.findCheck(uri, { since: start, completedOnly: false })).toEqual(Option.some(check))
            expect(yield* store.findCheck(sharingItsStart, { since: start, completedOnly: false })).toEqual(
              Option.none()
            )

            const batch = yield* newBatch([uri, sharingItsStart, uri], { now: at(1) })
            expect(batch.checks.map((reused) => reused.id)).toEqual([check.id, batch.checks[1]!.id, check.id])
            expect(batch.checks[1]!.id).not.toBe(check.id)
            expect(batch.checks[1]!.uri).toBe(sharingItsStart)
          }), 60_000)

        test("is stored by a batch, found again, completed and reused within the window", () =>
          Effect.gen(function*() {
            const store = yield* LinkcheckStore
            const uri = longUri(length, 2)
            const batch = yield* newBatch(["https://short.example/", uri])
            expect(batch.checks.map((check) => check.uri)).toEqual(["https://short.example/", uri])
            expect(yield* store.findBatch(batch.id)).toEqual(Option.some(batch))
            const found = yield* store.findCheck(uri, { since: start, completedOnly: false })
            expect(Option.map(found, (check) => check.id)).toEqual(Option.some(batch.checks[1]!.id))

            const claimed = yield* claim()
            expect(new Set(uris(claimed))).toEqual(new Set(["https://short.example/", uri]))
            yield* Effect.forEach(claimed, (check) =>
              completeOne(store, { id: check.id, workerId: "worker-a", result: broken, now: at(5) }))
            const completed = yield* store.findCheck(uri, { since: start, completedOnly: true })
            expect(Option.map(completed, (check) => check.result)).toEqual(Option.some(broken))

            const again = yield* newBatch([uri], { now: at(10) })
            expect(again.checks.map((check) => check.id)).toEqual([batch.checks[1]!.id])
            expect(again.completedAt).toEqual(at(5))
            const outsideWindow = yield* newBatch([uri], { reuseSince: at(10), now: at(10) })
            expect(outsideWindow.checks[0]!.id).not.toBe(batch.checks[1]!.id)
          }), 60_000)
      })

      test("a host of 3,000 random characters is claimed and limited like any other", () =>
        Effect.gen(function*() {
          const host = `${incompressible(3_000, 3)}.example`
          const other = `${incompressible(3_000, 4)}.example`
          yield* claimedCheck(`https://${host}/in-a-request`, "worker-x")
          yield* newBatch([`https://${host}/1`, `https://${host}/2`, `https://${other}/1`, `https://${other}/2`])

          const claimed = yield* claim({ perHost: 2 })
          expect(uris(claimed)).toEqual([`https://${host}/1`, `https://${other}/1`, `https://${other}/2`])
          expect(claimed.map((check) => check.host)).toEqual([host, other, other])
          expect(yield* claim({ perHost: 2, workerId: "worker-b" })).toEqual([])
          expect(uris(yield* claim({ perHost: 3, workerId: "worker-b" }))).toEqual([`https://${host}/2`])
        }), 60_000)

      test("a webhook uri and secret token of 1 MB each are stored and read back", () =>
        Effect.gen(function*() {
          const store = yield* LinkcheckStore
          const webhook = { uri: longUri(1_000_000, 5), secretToken: incompressible(1_000_000, 6) }
          const batch = yield* store.createBatch({
            uris: ["https://example.com/"],
            priority: "high",
            reuseSince: null,
            webhook,
            now: start
          })
          expect(batch.webhook).toEqual(webhook)
          expect(Option.map(yield* store.findBatch(batch.id), (found) => found.webhook)).toEqual(Option.some(webhook))
          const [check] = yield* claim()
          const completed = yield* completeOne(store, { id: check!.id, workerId: "worker-a", result: ok, now: at(1) })
          expect(completed).toEqual(Option.some({ completedBatches: [{ id: batch.id, webhook, traceParent: null }] }))
        }), 60_000)
    })

    describe("links into sections", () => {
      const withSections = (uris: ReadonlyArray<string>, options: { reuseSince?: Date | null; now?: Date } = {}) =>
        Effect.flatMap(LinkcheckStore, (store) =>
          store.createBatch({
            uris,
            checkFragments: true,
            priority: "high",
            reuseSince: options.reuseSince === undefined ? start : options.reuseSince,
            webhook: null,
            now: options.now ?? start
          }))

      /** Claims everything and records each page's result with its anchors. */
      const completeWithAnchors = (pages: ReadonlyArray<{ readonly id: string; readonly anchors: ReadonlyArray<string> | null }>, now: Date) =>
        Effect.gen(function*() {
          const store = yield* LinkcheckStore
          yield* store.claimChecks(claimRequest({ workerId: "completer", now, claimUntil: new Date(now.getTime() + 60_000) }))
          return yield* store.completeChecks({
            workerId: "completer",
            now,
            results: pages.map(({ anchors, id }) => ({ id, result: ok, anchors }))
          })
        })

      test("the links of one page share its check, which reads anchors if one names a section; uris stay as given", () =>
        Effect.gen(function*() {
          const uris = [
            "https://a.example/guide#costs",
            "https://a.example/guide",
            "https://a.example/guide#",
            "https://b.example/#top",
            "https://a.example/guide#costs"
          ]
          const batch = yield* withSections(uris)
          expect(batch.uris).toEqual(uris)
          expect(batch.checkFragments).toBe(true)
          expect(batch.checks.map((check) => check.uri)).toEqual([
            "https://a.example/guide",
            "https://a.example/guide",
            "https://a.example/guide",
            "https://b.example/",
            "https://a.example/guide"
          ])
          expect(new Set(batch.checks.map((check) => check.id)).size).toBe(2)
          const claimed = yield* claim()
          expect(claimed.map((check) => [check.uri, check.readsAnchors])).toEqual([
            ["https://a.example/guide", true],
            ["https://b.example/", false]
          ])
        }))

      test("a page's anchors are kept with its result, and the batch's report judges each link's fragment", () =>
        Effect.gen(function*() {
          const store = yield* LinkcheckStore
          const uris = ["https://a.example/#costs", "https://a.example/#gone", "https://a.example/", "https://b.example/#x"]
          const batch = yield* withSections(uris)
          const [a, , , b] = batch.checks
          yield* completeWithAnchors([{ id: a!.id, anchors: ["costs", "café"] }, { id: b!.id, anchors: null }], at(5))
          const found = Option.getOrThrow(yield* store.findBatch(batch.id))
          expect(found.uris).toEqual(uris)
          expect(found.checkFragments).toBe(true)
          expect(found.checks[0]!.anchors).toEqual(["costs", "café"])
          expect(found.checks[3]!.anchors).toBeNull()
          const report = JSON.parse(Option.getOrThrow(yield* store.findWebhookReport(batch.id)).reportJson)
          expect(report.links.map((link: { uri: string; status: string }) => [link.uri, link.status])).toEqual([
            ["https://a.example/#costs", "ok"],
            ["https://a.example/#gone", "caution"],
            ["https://a.example/", "ok"],
            ["https://b.example/#x", "ok"]
          ])
          expect(report.links[1].problem_summary).toBe("Missing section")
          expect(report.totals).toMatchObject({ links: 4, ok: 3, caution: 1 })
          expect(Option.getOrThrow(yield* store.findWebhookReport(batch.id)).reportJson).toBe(batchReportJson(found))
        }))

      test("a page checked without its anchors is not reused for a link that names a section; the other way round it is", () =>
        Effect.gen(function*() {
          const store = yield* LinkcheckStore
          const plain = yield* newBatch(["https://a.example/"])
          yield* complete([plain.checks[0]!.id], at(1))
          const sections = yield* withSections(["https://a.example/#costs"], { now: at(2) })
          expect(sections.checks[0]!.id).not.toBe(plain.checks[0]!.id)
          expect(sections.checks[0]!.completedAt).toBeNull()
          const again = yield* withSections(["https://a.example/", "https://a.example/#other"], { now: at(3) })
          expect(again.checks.map((check) => check.id)).toEqual([sections.checks[0]!.id, sections.checks[0]!.id])
          expect(Option.map(
            yield* store.findCheck("https://a.example/", { since: start, completedOnly: true, readsAnchors: true }),
            (check) => check.id
          )).toEqual(Option.none())
          expect(Option.map(
            yield* store.findCheck("https://a.example/", { since: start, completedOnly: false, readsAnchors: true }),
            (check) => check.id
          )).toEqual(Option.some(sections.checks[0]!.id))
          const created = yield* store.createChecks({
            pages: [{ uri: "https://a.example/", readsAnchors: true }, { uri: "https://c.example/", readsAnchors: true }],
            priority: "high",
            reuseSince: start,
            now: at(4)
          })
          expect(created.map((check) => check.uri)).toEqual(["https://c.example/"])
        }))
    })

    describe("findWebhookReport", () => {
      /** The report as the service's TypeScript builds it from `findBatch`: the store's text must be the same text. */
      const expectedReport = (id: number) =>
        Effect.map(LinkcheckStore, (store) => store.findBatch(id)).pipe(
          Effect.flatten,
          Effect.map(Option.map((batch) => {
            const reportJson = batchReportJson(batch)
            return { webhook: batch.webhook, reportJson, report: JSON.parse(reportJson) }
          }))
        )
      const foundReport = (id: number) =>
        Effect.flatMap(LinkcheckStore, (store) => store.findWebhookReport(id)).pipe(
          Effect.map(Option.map(({ reportJson, webhook }) => ({ webhook, reportJson, report: JSON.parse(reportJson) })))
        )

      test("is the report that findBatch's record gives, in progress and completed, with its webhook", () =>
        Effect.gen(function*() {
          const store = yield* LinkcheckStore
          const quoted = `https://example.com/"quoted"\\path?ü=✓&tab=\t`
          const batch = yield* store.createBatch({
            uris: ["https://ok.example/", quoted, "https://broken.example/", "https://ok.example/", "https://late.example/"],
            priority: "high",
            reuseSince: start,
            webhook: { uri: "https://hooks.example/done", secretToken: "s3cret" },
            now: start
          })
          const [okCheck, quotedCheck, brokenCheck, , lateCheck] = batch.checks
          // Sub-second times: the report gives them to the second, cut, not rounded.
          yield* complete([okCheck!.id], new Date(start.getTime() + 1999))
          yield* complete([brokenCheck!.id, quotedCheck!.id], at(2.5), {
            ...broken,
            errors: ["Line one\nline \"two\"", "ünïcödé ✓"]
          })
          const inProgress = yield* foundReport(batch.id)
          expect(inProgress).toEqual(yield* expectedReport(batch.id))
          expect(Option.getOrThrow(inProgress).report.status).toBe("in_progress")
          expect(Option.getOrThrow(inProgress).report.totals).toEqual({
            links: 5, ok: 2, caution: 0, broken: 2, pending: 1, danger: 2
          })

          yield* complete([lateCheck!.id], at(70), { ...ok, status: "caution", warnings: ["Slow."], suggestedFix: "Wait." })
          const completed = yield* foundReport(batch.id)
          expect(completed).toEqual(yield* expectedReport(batch.id))
          expect(Option.getOrThrow(completed).report).toMatchObject({ status: "completed", completed_at: "2024-03-01T12:01:10Z" })
          expect(Option.getOrThrow(completed).report.links[0].checked).toBe("2024-03-01T12:00:01Z")
          expect(Option.getOrThrow(completed).webhook).toEqual({ uri: "https://hooks.example/done", secretToken: "s3cret" })
        }))

      test("of a batch without a webhook, of 5000 links, and of an unknown id", () =>
        Effect.gen(function*() {
          const batch = yield* newBatch(Array.from({ length: 5000 }, (_, i) => `https://host${i % 50}.example/${i % 4000}`))
          yield* complete(batch.checks.slice(0, 2500).map((check) => check.id), at(5))
          const found = yield* foundReport(batch.id)
          expect(found).toEqual(yield* expectedReport(batch.id))
          expect(Option.getOrThrow(found).webhook).toBeNull()
          expect(yield* foundReport(12345)).toEqual(Option.none())
          expect(yield* foundReport(1.5)).toEqual(Option.none())
        }), 60_000)
    })

    describe("webhook attempts", () => {
      test("are recorded and listed in the order they were made", () =>
        Effect.gen(function*() {
          const store = yield* LinkcheckStore
          const batch = yield* newBatch(["https://example.com/"])
          const other = yield* newBatch(["https://example.org/"], { reuseSince: null })
          const attempts = [
            { batchId: batch.id, attemptedAt: at(10), statusCode: 503, error: "Service unavailable", final: false },
            { batchId: batch.id, attemptedAt: at(20), statusCode: null, error: "Connection refused", final: false },
            { batchId: batch.id, attemptedAt: at(40), statusCode: 200, error: null, final: true }
          ]
          yield* store.recordWebhookAttempt(attempts[1]!)
          yield* store.recordWebhookAttempt(attempts[0]!)
          yield* store.recordWebhookAttempt({ batchId: other.id, attemptedAt: at(15), statusCode: 204, error: null, final: true })
          yield* store.recordWebhookAttempt(attempts[2]!)
          expect(yield* store.webhookAttempts(batch.id)).toEqual(attempts)
          expect(yield* store.webhookAttempts(987654)).toEqual([])
        }))

      test("cannot be recorded for a batch that does not exist", () =>
        Effect.gen(function*() {
          const store = yield* LinkcheckStore
          const error = yield* Effect.flip(
            store.recordWebhookAttempt({ batchId: 987654, attemptedAt: start, statusCode: 200, error: null, final: true })
          )
          expect(error._tag).toBe("StoreError")
        }))
    })

    describe("deleteCompletedBefore", () => {
      test("deletes checks completed before the cutoff with every batch that holds one", () =>
        Effect.gen(function*() {
          const store = yield* LinkcheckStore
          const oldAndPending = yield* newBatch(["https://old.example/", "https://pending.example/"])
          const recent = yield* newBatch(["https://recent.example/"], { reuseSince: null })
          const [old, pending] = oldAndPending.checks.map((check) => check.id)
          yield* store.claimChecks(claimRequest({ workerId: "completer" }))
          yield* completeOne(store, { id: old!, workerId: "completer", result: ok, now: at(10) })
          yield* completeOne(store, { id: recent.checks[0]!.id, workerId: "completer", result: ok, now: at(100) })
          yield* store.recordWebhookAttempt({
            batchId: oldAndPending.id,
            attemptedAt: at(5),
            statusCode: 500,
            final: false,
            error: null
          })

          expect(yield* store.deleteCompletedBefore(at(50))).toEqual({ checks: 1, batches: 1 })
          expect(yield* store.findBatch(oldAndPending.id)).toEqual(Option.none())
          expect(yield* store.webhookAttempts(oldAndPending.id)).toEqual([])
          expect(yield* store.findCheck("https://old.example/", { since: start, completedOnly: false })).toEqual(
            Option.none()
          )
          const stillPending = yield* store.findCheck("https://pending.example/", {
            since: start,
            completedOnly: false
          })
          expect(Option.map(stillPending, (check) => check.id)).toEqual(Option.some(pending))
          expect(Option.map(yield* store.findBatch(recent.id), (batch) => batch.checks.length)).toEqual(Option.some(1))
          expect(yield* store.deleteCompletedBefore(at(50))).toEqual({ checks: 0, batches: 0 })
          const reborn = yield* newBatch(["https://old.example/"], { now: at(200) })
          expect(reborn.completedAt).toBeNull()
        }))
    })

    describe("transaction", () => {
      test("keeps the work of a transaction that succeeds and undoes one that fails", () =>
        Effect.gen(function*() {
          const store = yield* LinkcheckStore
          const kept = yield* store.transaction(Effect.gen(function*() {
            const batch = yield* newBatch(["https://kept.example/"])
            yield* store.recordWebhookAttempt({ batchId: batch.id, attemptedAt: start, statusCode: 200, error: null, final: true })
            return batch
          }))
          const failure = yield* store.transaction(Effect.gen(function*() {
            yield* newBatch(["https://undone.example/"], { reuseSince: null })
            yield* claim()
            return yield* Effect.fail("changed my mind" as const)
          })).pipe(Effect.flip)
          expect(failure).toBe("changed my mind")

          expect(Option.isSome(yield* store.findBatch(kept.id))).toBe(true)
          expect(yield* store.findCheck("https://undone.example/", { since: start, completedOnly: false })).toEqual(
            Option.none()
          )
          expect(uris(yield* claim())).toEqual(["https://kept.example/"])
        }))

      test("another copy never sees the work of an open transaction that then fails", () =>
        Effect.gen(function*() {
          const store = yield* LinkcheckStore
          const other = yield* SecondCopy
          const created = yield* Deferred.make<void>()
          // forked outside the transaction: fibers forked inside it join it
          const reader = yield* Effect.fork(Effect.zipRight(
            Deferred.await(created),
            other.findCheck("https://uncommitted.example/", { since: start, completedOnly: false })
          ))
          const failure = yield* store.transaction(Effect.gen(function*() {
            yield* store.createCheck({ uri: "https://uncommitted.example/", priority: "high", now: start })
            yield* Deferred.succeed(created, undefined)
            // real time for the other copy's query to reach the database (or wait for its lock) meanwhile
            yield* TestServices.provideLive(Effect.sleep("50 millis"))
            return yield* Effect.fail("rolled back" as const)
          })).pipe(Effect.flip)
          expect(failure).toBe("rolled back")
          expect(yield* Fiber.join(reader)).toEqual(Option.none())
        }))
    })
  })
}
