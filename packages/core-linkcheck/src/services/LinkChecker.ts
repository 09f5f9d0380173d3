import { JobQueue } from "@civicstack/jobs"
import type { JobQueueError } from "@civicstack/jobs"
import { Clock, Context, Duration, Effect, Layer, Option } from "effect"
import { BatchNotFound } from "../api/errors"
import type { BatchReport, LinkReport } from "../api/reports"
import type { CheckParams, CreateBatchBody } from "../api/requests"
import type { Webhook } from "../domain/check"
import { toBatchReport, toLinkReport } from "../domain/reports"
import { LinkcheckStore } from "../storage/LinkcheckStore"
import type { CompletedChecks, StoreError } from "../storage/LinkcheckStore"
import { Checker } from "./Checker"
import { CheckSignal } from "./CheckSignal"
import { webhookDedupeKey, WebhookDelivery } from "./webhookJob"

export interface CreatedBatch {
  readonly report: BatchReport
  /** True when every link already had a result, so the batch was complete when created (HTTP 201). */
  readonly completedAtOnce: boolean
}

/** How long a worker or request owns a check it started before another may take it over. */
export const CLAIM_DURATION = Duration.minutes(5)

/** The link checking service: single checks, batches and their reports. */
export class LinkChecker extends Context.Tag("@civicstack/core-linkcheck/LinkChecker")<LinkChecker, {
  readonly check: (params: CheckParams) => Effect.Effect<LinkReport, StoreError>
  readonly createBatch: (body: CreateBatchBody) => Effect.Effect<CreatedBatch, StoreError | JobQueueError>
  readonly getBatch: (id: number) => Effect.Effect<BatchReport, BatchNotFound | StoreError>
}>() {}

const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))

const reuseSince = (at: Date, checkedWithinSeconds: number) =>
  checkedWithinSeconds === 0 ? null : new Date(at.getTime() - checkedWithinSeconds * 1000)

/** Enqueues the webhook of each batch that just completed; runs inside the store transaction that completed them. */
export const enqueueWebhooks = (completed: CompletedChecks["completedBatches"]) =>
  Effect.flatMap(JobQueue, (jobs) =>
    Effect.forEach(
      completed.filter((batch): batch is { id: number; webhook: Webhook } => batch.webhook !== null),
      (batch) => jobs.enqueue(WebhookDelivery, { batchId: batch.id }, { dedupeKey: webhookDedupeKey(batch.id) }),
      { discard: true }
    ))

export const linkCheckerLayer = Layer.effect(
  LinkChecker,
  Effect.gen(function*() {
    const store = yield* LinkcheckStore
    const checker = yield* Checker
    const jobs = yield* JobQueue
    const signal = yield* CheckSignal

    const checkNow = (uri: string, at: Date) =>
      Effect.gen(function*() {
        const workerId = `request-${crypto.randomUUID()}`
        const created = yield* store.createCheck({
          uri,
          priority: "high",
          now: at,
          claim: { workerId, until: new Date(at.getTime() + Duration.toMillis(CLAIM_DURATION)) }
        })
        const result = yield* checker.check(uri, { background: false })
        const completedAt = yield* now
        yield* store.completeChecks({ workerId, now: completedAt, results: [{ id: created.id, result }] })
        return toLinkReport({ ...created, completedAt, result })
      })

    const check = ({ checked_within, synchronous, uri }: CheckParams) =>
      Effect.gen(function*() {
        const at = yield* now
        const since = reuseSince(at, checked_within)
        if (since !== null) {
          const existing = yield* store.findCheck(uri, { since, completedOnly: synchronous })
          if (Option.isSome(existing)) return toLinkReport(existing.value)
        }
        if (synchronous) return yield* checkNow(uri, at)
        const created = yield* store.createCheck({ uri, priority: "high", now: at })
        yield* signal.notify
        return toLinkReport(created)
      })

    const createBatch = (body: CreateBatchBody) =>
      Effect.gen(function*() {
        const at = yield* now
        const webhook = body.webhook_uri === undefined
          ? null
          : { uri: body.webhook_uri, secretToken: body.webhook_secret_token ?? null }
        const batch = yield* store.transaction(
          Effect.gen(function*() {
            const batch = yield* store.createBatch({
              uris: body.uris,
              priority: body.priority,
              reuseSince: reuseSince(at, body.checked_within),
              webhook,
              now: at
            })
            if (batch.completedAt !== null && webhook !== null) {
              yield* jobs.enqueue(WebhookDelivery, { batchId: batch.id }, { dedupeKey: webhookDedupeKey(batch.id) })
            }
            return batch
          })
        )
        if (batch.completedAt === null) yield* signal.notify
        return { report: toBatchReport(batch), completedAtOnce: batch.completedAt !== null }
      })

    const getBatch = (id: number) =>
      store.findBatch(id).pipe(
        Effect.flatMap(Option.match({
          onNone: () => new BatchNotFound({ error: "Not Found" }),
          onSome: (batch) => Effect.succeed(toBatchReport(batch))
        }))
      )

    return { check, createBatch, getBatch }
  })
)
