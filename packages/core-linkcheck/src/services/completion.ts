import type { JobQueue, JobQueueError } from "@civicstack/jobs"
import type { StoreError } from "@civicstack/kit"
import { Effect, Metric } from "effect"
import type { Context } from "effect"
import { webhookDedupeKey, webhookDeliveryJob } from "../domain/jobs"
import { checksCompleted } from "../domain/metrics"
import type {
  CheckCompletion,
  ClaimedNewBatch,
  ClaimRequest,
  CompletedChecks,
  LinkcheckStore,
  NewBatch
} from "../storage/LinkcheckStore"

type Store = Context.Tag.Service<LinkcheckStore>
type Jobs = Context.Tag.Service<JobQueue>

/**
 * The one place where batches complete. Every path that can finish a batch (recorded check results, whether from the
 * scheduler or from a check run inside a request, and a batch whose links all had results when it was created) goes
 * through here, so the webhook of every completed batch is enqueued in the same transaction that completed it.
 */
export interface Completion {
  /** Records results of checks `workerId` holds, counts their batches down, enqueues the webhooks of those completed. */
  readonly recordResults: (input: {
    readonly workerId: string
    readonly now: Date
    readonly results: ReadonlyArray<CheckCompletion>
  }) => Effect.Effect<CompletedChecks, StoreError | JobQueueError>
  /**
   * Creates a batch, with `claim` claiming the checks it creates (see `createAndClaimBatch`); one whose every link
   * already had a result is complete at once and its webhook enqueued.
   */
  readonly createBatch: (
    batch: NewBatch,
    claim?: ClaimRequest
  ) => Effect.Effect<ClaimedNewBatch, StoreError | JobQueueError>
}

/** Counts the recorded checks by their link's status, once their transaction committed. */
const countCompleted = (results: ReadonlyArray<CheckCompletion>, recorded: ReadonlyArray<string>) => {
  const recordedIds = new Set(recorded)
  const byStatus = new Map<string, number>()
  for (const { id, result } of results) {
    if (recordedIds.has(id)) byStatus.set(result.status, (byStatus.get(result.status) ?? 0) + 1)
  }
  return Effect.forEach(byStatus, ([status, count]) =>
    Metric.incrementBy(Metric.tagged(checksCompleted, "status", status), count), { discard: true })
}

export const makeCompletion = (store: Store, jobs: Jobs): Completion => {
  /** The delivery's span links to the request that created the batch, not to the worker that completed it. */
  const enqueueWebhook = (batchId: number, traceParent: string | null) =>
    jobs.enqueue(webhookDeliveryJob, { batchId }, { dedupeKey: webhookDedupeKey(batchId), traceParent })

  return {
    recordResults: (input) =>
      store.transaction(Effect.gen(function*() {
        const completed = yield* store.completeChecks(input)
        for (const batch of completed.completedBatches) {
          if (batch.webhook !== null) yield* enqueueWebhook(batch.id, batch.traceParent)
        }
        return completed
      })).pipe(Effect.tap((completed) => countCompleted(input.results, completed.recorded))),
    createBatch: (batch, claim) =>
      store.transaction(Effect.gen(function*() {
        const created = claim === undefined
          ? { batch: yield* store.createBatch(batch), claimed: [] }
          : yield* store.createAndClaimBatch({ ...batch, claim })
        if (created.batch.completedAt !== null && created.batch.webhook !== null) {
          yield* enqueueWebhook(created.batch.id, batch.traceParent ?? null)
        }
        return created
      }))
  }
}
