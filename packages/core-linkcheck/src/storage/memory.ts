import { StoreError } from "@civicstack/kit"
import { Effect, FiberRef, HashMap, Layer, Option, Ref } from "effect"
import { LinkcheckStore } from "./LinkcheckStore"
import { completeChecks, createBatch, deleteCompletedBefore, storedBatchRecord } from "./memory/batches"
import { claimChecks, createChecks, updateHeldChecks, workload } from "./memory/checks"
import type { State } from "./memory/state"
import { emptyState, insertCheck, newestCheck, recordOf } from "./memory/state"
import { byAttemptTime, recordWebhookAttempt } from "./memory/webhookAttempts"
import { heartbeat, retireWorkers } from "./memory/workers"
import { batchReportJson } from "./reportJson"

/** Marks the fibers of one open transaction; inherited by fibers it forks, which join it as on SQL. */
interface OpenTransaction {
  open: boolean
}

const make = Effect.gen(function*() {
  const stateRef = yield* Ref.make(emptyState)
  const lock = yield* Effect.makeSemaphore(1)
  const currentTransaction = yield* FiberRef.make<OpenTransaction | null>(null)

  const isInsideTransaction = Effect.map(FiberRef.get(currentTransaction), (transaction) =>
    transaction !== null && transaction.open)

  /** Runs one step on the state, waiting for any other fiber's transaction to finish first. */
  const atomically = <A>(step: (state: State) => readonly [A, State]): Effect.Effect<A> =>
    Effect.flatMap(isInsideTransaction, (inside) =>
      inside ? Ref.modify(stateRef, step) : lock.withPermits(1)(Ref.modify(stateRef, step)))

  const read = <A>(f: (state: State) => A) => atomically((state) => [f(state), state])

  const rollingBackOnFailure = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.flatMap(Ref.get(stateRef), (snapshot) => Effect.onError(effect, () => Ref.set(stateRef, snapshot)))

  const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | StoreError, R> =>
    Effect.flatMap(isInsideTransaction, (inside) =>
      inside
        ? rollingBackOnFailure(effect)
        : lock.withPermits(1)(Effect.suspend(() => {
          const opened: OpenTransaction = { open: true }
          return rollingBackOnFailure(effect).pipe(
            Effect.locally(currentTransaction, opened),
            Effect.ensuring(Effect.sync(() => {
              opened.open = false
            }))
          )
        })))

  return LinkcheckStore.of({
    transaction,
    findCheck: (uri, options) =>
      read((state) => Option.map(Option.fromNullable(newestCheck(state, uri, options)), recordOf)),
    createCheck: (input) =>
      atomically((state) => {
        const [check, next] = insertCheck(state, input, input.claim)
        return [recordOf(check), next]
      }),
    createChecks: (input) => atomically((state) => {
      const [{ created }, next] = createChecks(state, input)
      return [created, next]
    }),
    createAndClaimChecks: ({ claim, ...input }) => atomically((state) => createChecks(state, input, claim)),
    createBatch: (batch) =>
      atomically((state) => {
        const [created, next] = createBatch(state, batch)
        return [created.batch, next]
      }),
    createAndClaimBatch: ({ claim, ...batch }) => atomically((state) => createBatch(state, batch, claim)),
    findBatch: (id, owner) =>
      read((state) =>
        HashMap.get(state.batches, id).pipe(
          Option.filter((batch) => owner === undefined || batch.owner === owner),
          Option.map((batch) => storedBatchRecord(state, batch))
        )
      ),
    findWebhookReport: (id) =>
      read((state) =>
        Option.map(HashMap.get(state.batches, id), (batch) => {
          const record = storedBatchRecord(state, batch)
          return { webhook: record.webhook, reportJson: batchReportJson(record) }
        })
      ),
    claimChecks: (request) => atomically((state) => claimChecks(state, request)),
    extendClaims: (workerId, ids, until) =>
      atomically((state) => [
        undefined,
        updateHeldChecks(state, workerId, ids, (check) => ({ ...check, claimedUntil: until }))
      ]),
    releaseClaims: (workerId, ids) =>
      atomically((state) => [
        undefined,
        updateHeldChecks(state, workerId, ids, (check) => ({
          ...check,
          claimedBy: null,
          claimedUntil: null,
          claimedAt: null,
          attempts: check.attempts - 1
        }))
      ]),
    completeChecks: (input) => atomically((state) => completeChecks(state, input)),
    recordWebhookAttempt: (attempt) =>
      atomically((state) => recordWebhookAttempt(state, attempt)).pipe(
        Effect.filterOrFail(
          (recorded) => recorded,
          () => new StoreError({ message: `linkcheck store: no batch ${attempt.batchId} for a webhook attempt` })
        ),
        Effect.asVoid
      ),
    webhookAttempts: (batchId) =>
      read((state) =>
        Option.match(HashMap.get(state.batches, batchId), {
          onNone: () => [],
          onSome: (batch) => [...batch.webhookAttempts].sort(byAttemptTime)
        })
      ),
    heartbeat: (beat) => atomically((state) => [undefined, heartbeat(state, beat)]),
    workersOn: (hostname) =>
      read((state) =>
        [...HashMap.entries(state.workers)]
          .filter(([, worker]) => worker.hostname === hostname)
          .map(([id, worker]) => ({ id, pid: worker.pid }))
      ),
    retireWorkers: (workerIds) => atomically((state) => [undefined, retireWorkers(state, workerIds)]),
    workload: (now) => read((state) => workload(state, now)),
    deleteCompletedBefore: (before) => atomically((state) => deleteCompletedBefore(state, before))
  })
})

/** The store in this process's memory: for tests and for embedding without a database. */
export const layerMemory = (): Layer.Layer<LinkcheckStore> => Layer.scoped(LinkcheckStore, make)
