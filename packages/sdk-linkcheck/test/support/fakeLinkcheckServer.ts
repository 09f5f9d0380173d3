import {
  type BatchReport,
  BatchNotFound,
  type CheckParams,
  type CreateBatchBody,
  InvalidRequest,
  LinkcheckAccess,
  LinkcheckApi,
  type LinkReport
} from "@civicstack/core-linkcheck/api"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiError from "@effect/platform/HttpApiError"
import { baseUrl, fakeTokenAccess, servedOnLoopback } from "@civicstack/kit/testing"
import { Effect, HashMap, Layer, Option, Ref } from "effect"

/** Every completed check of the fake service carries this time. */
export const CHECKED_AT = new Date("2017-04-12T18:47:16Z")

/** Uris the fake treats specially. Batches whose uris all start with `CACHED_PREFIX` complete at once (201). */
export const CACHED_PREFIX = "https://cached.example/"
export const REFUSED_URI = "https://refused.example/"
export const PLATFORM_REFUSED_URI = "https://platform-refused.example/"
export const CRASHING_URI = "https://crash.example/"
export const NEVER_COMPLETING_URI = "https://never.example/"

/** An in-progress batch answers in progress to this many reads and completed from the next one on. */
export const READS_IN_PROGRESS = 2

interface StoredBatch {
  readonly uris: ReadonlyArray<string>
  readonly completedAtOnce: boolean
  readonly reads: number
}

const pendingLink = (uri: string): LinkReport => ({
  uri,
  status: "pending",
  checked: null,
  problem_summary: null,
  errors: [],
  warnings: [],
  danger: [],
  suggested_fix: null
})

const okLink = (uri: string): LinkReport => ({ ...pendingLink(uri), status: "ok", checked: CHECKED_AT })

const reportOf = (id: number, uris: ReadonlyArray<string>, completed: boolean): BatchReport => ({
  id,
  status: completed ? "completed" : "in_progress",
  links: uris.map(completed ? okLink : pendingLink),
  totals: {
    links: uris.length,
    ok: completed ? uris.length : 0,
    caution: 0,
    broken: 0,
    pending: completed ? 0 : uris.length,
    danger: 0
  },
  completed_at: completed ? CHECKED_AT : null
})

const isCompleted = (batch: StoredBatch) =>
  batch.completedAtOnce || (!batch.uris.includes(NEVER_COMPLETING_URI) && batch.reads > READS_IN_PROGRESS)

/** The in-memory state behind the fake service, and what it received. */
export class FakeLinkcheck extends Effect.Service<FakeLinkcheck>()("test/FakeLinkcheck", {
  effect: Effect.gen(function*() {
    const checkRequests = yield* Ref.make<ReadonlyArray<CheckParams>>([])
    const batchRequests = yield* Ref.make<ReadonlyArray<CreateBatchBody>>([])
    const batches = yield* Ref.make(HashMap.empty<number, StoredBatch>())
    const lastBatchId = yield* Ref.make(0)

    const check = (params: CheckParams) =>
      Effect.gen(function*() {
        yield* Ref.update(checkRequests, (requests) => [...requests, params])
        switch (params.uri) {
          case REFUSED_URI:
            return yield* new InvalidRequest({ error: "uri: is refused by this service", details: { uri: "is refused" } })
          case PLATFORM_REFUSED_URI:
            return yield* new HttpApiError.HttpApiDecodeError({
              issues: [{ _tag: "Type", path: ["uri"], message: "is refused by the platform" }],
              message: "uri is refused by the platform"
            })
          case CRASHING_URI:
            return yield* Effect.die("the fake service crashed")
        }
        return params.synchronous ? okLink(params.uri) : pendingLink(params.uri)
      })

    const createBatch = (body: CreateBatchBody) =>
      Effect.gen(function*() {
        yield* Ref.update(batchRequests, (requests) => [...requests, body])
        const id = yield* Ref.updateAndGet(lastBatchId, (last) => last + 1)
        const completedAtOnce = body.uris.every((uri) => uri.startsWith(CACHED_PREFIX))
        yield* Ref.update(batches, HashMap.set(id, { uris: body.uris, completedAtOnce, reads: 0 }))
        const report = reportOf(id, body.uris, completedAtOnce)
        return completedAtOnce ? { ...report, outcome: "completed" as const } : { ...report, outcome: "accepted" as const }
      })

    const getBatch = (idText: string) =>
      Effect.gen(function*() {
        const id = Number(idText)
        const stored = HashMap.get(yield* Ref.get(batches), id)
        if (Option.isNone(stored)) return yield* new BatchNotFound({ error: "Not Found" })
        const read = { ...stored.value, reads: stored.value.reads + 1 }
        yield* Ref.update(batches, HashMap.set(id, read))
        return reportOf(id, read.uris, isCompleted(read))
      })

    return {
      check,
      createBatch,
      getBatch,
      checkRequests: Ref.get(checkRequests),
      batchRequests: Ref.get(batchRequests),
      readsOf: (id: number) =>
        Effect.map(Ref.get(batches), (all) => Option.match(HashMap.get(all, id), { onNone: () => 0, onSome: (batch) => batch.reads }))
    }
  })
}) {}

const FakeLinkcheckHandlers = HttpApiBuilder.group(LinkcheckApi, "linkcheck", (handlers) =>
  Effect.gen(function*() {
    const fake = yield* FakeLinkcheck
    return handlers
      .handle("check", ({ urlParams }) => fake.check(urlParams))
      .handle("createBatch", ({ payload }) => fake.createBatch(payload))
      .handle("getBatch", ({ path }) => fake.getBatch(path.id))
  }))

export { FAKE_TOKEN, FORBIDDEN_TOKEN } from "@civicstack/kit/testing"

/** The link checking contract served on 127.0.0.1 at a free port by in-memory handlers. */
export const FakeLinkcheckServer = servedOnLoopback(
  HttpApiBuilder.api(LinkcheckApi).pipe(
    Layer.provide(FakeLinkcheckHandlers),
    Layer.provide(fakeTokenAccess(LinkcheckAccess, "link-checker-api"))
  ),
  FakeLinkcheck.Default
)

/** The base URL of the running fake server. */
export const serverUrl = baseUrl
