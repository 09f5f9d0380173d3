import type { StoreError } from "@civicstack/kit"
import { Context } from "effect"
import type { Effect, Option } from "effect"
import type { BatchRecord, CheckPriority, CheckRecord, CheckResult, ClaimedCheck, Webhook } from "../domain/check"
import type { WantedPage } from "../domain/fragments"

export interface NewBatch {
  /**
   * In the caller's order, fragments included; duplicates allowed. Links of one page (`targetOf`) share one check,
   * which reads the page's anchors if `checkFragments` and any of them names a section.
   */
  readonly uris: ReadonlyArray<string>
  /** Whether the batch's links have their fragments judged; false when not given. */
  readonly checkFragments?: boolean
  readonly priority: CheckPriority
  /**
   * A check of a page created at or after this instant is reused, pending or not, if it reads the page's anchors or
   * none of the page's links needs them; `null` reuses none.
   */
  readonly reuseSince: Date | null
  readonly webhook: Webhook | null
  /** Who created it; a batch without one is found only by `findBatch` without an owner. */
  readonly owner?: string
  /** The span of the request that created it (a W3C `traceparent`), for the work done for it later to link to. */
  readonly traceParent?: string | null
  readonly now: Date
}

export interface NewChecks {
  readonly pages: ReadonlyArray<WantedPage>
  readonly priority: CheckPriority
  readonly reuseSince: Date | null
  readonly now: Date
}

export interface ClaimedNewChecks {
  readonly created: ReadonlyArray<CheckRecord>
  /** Those of `created` that were claimed, in the order they should run. */
  readonly claimed: ReadonlyArray<ClaimedCheck>
}

export interface ClaimedNewBatch {
  readonly batch: BatchRecord
  /** Of the checks the batch created, those that were claimed, in the order they should run. */
  readonly claimed: ReadonlyArray<ClaimedCheck>
}

export interface ClaimRequest {
  readonly workerId: string
  readonly now: Date
  readonly claimUntil: Date
  /** How many checks to claim at most. */
  readonly limit: number
  /**
   * The most checks of one host that may be held at once by all workers together (claims that have not expired,
   * checks run inside requests included): a claim takes from each host only what is left of that.
   */
  readonly perHost: number
  /**
   * How many checks of a host this worker may hold beyond `perHost` while no other worker holds any of it: checks
   * claimed ahead, which it starts only as its own running checks of the host finish.
   */
  readonly aheadPerHost: number
  /**
   * What this worker holds per host by its own count, used instead of its claims in the store: a check that has
   * finished no longer counts although its result is not recorded yet.
   */
  readonly heldByHost: ReadonlyMap<string, number>
  /**
   * Workers whose last heartbeat is at or after this are alive. While more than one is, none claims ahead, and each
   * holds at most its share of a host (`perHost` divided among them, rounded up), so they share hosts out rather than
   * one holding every allowed claim.
   */
  readonly workersAliveSince: Date
  /** Of `limit`, how many to take from low priority first when both priorities wait (so low is never starved). */
  readonly lowPriorityQuota: number
}

export interface CheckCompletion {
  readonly id: string
  readonly result: CheckResult
  /** The page's anchors, if its check read them (see `CheckRecord.anchors`). */
  readonly anchors?: ReadonlyArray<string> | null
}

export interface CompletedBatch {
  readonly id: number
  readonly webhook: Webhook | null
  readonly traceParent: string | null
}

export interface CompletedChecks {
  /** The checks whose results were recorded: those the worker still held. */
  readonly recorded: ReadonlyArray<string>
  /** Batches whose last pending links these checks were; they are now completed. */
  readonly completedBatches: ReadonlyArray<CompletedBatch>
}

export interface WebhookReport {
  readonly webhook: Webhook | null
  readonly reportJson: string
}

export interface WebhookAttempt {
  readonly batchId: number
  readonly attemptedAt: Date
  readonly statusCode: number | null
  readonly error: string | null
  /** This attempt ends the delivery: the receiver took the webhook, or refused it in a way no retry can change. */
  readonly final: boolean
}

/** A worker process announcing that it is alive. */
export interface WorkerHeartbeat {
  readonly workerId: string
  readonly hostname: string
  readonly pid: number
  readonly now: Date
  /** The checks the worker is working on: their claims are renewed until `claimUntil`. */
  readonly holding: ReadonlyArray<string>
  readonly claimUntil: Date
}

export interface Workload {
  /** Checks without a result. */
  readonly pending: number
  /** Of those, the ones claimed by a live worker or request. */
  readonly claimed: number
  /** When the oldest of those claims was taken, or null. */
  readonly oldestClaimAt: Date | null
}

/**
 * Storage of checks, batches and webhook attempts. Memory and SQL adapters pass one shared suite.
 * Every operation is atomic on its own; `transaction` groups several (and, on SQL, jobs enqueued inside it).
 */
export class LinkcheckStore extends Context.Tag("@civicstack/core-linkcheck/LinkcheckStore")<LinkcheckStore, {
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StoreError, R>
  /**
   * The newest check of the page `uri` created at or after `since`; with `completedOnly`, the newest completed one;
   * with `readsAnchors`, the newest that reads the page's anchors.
   */
  readonly findCheck: (
    uri: string,
    options: { readonly since: Date; readonly completedOnly: boolean; readonly readsAnchors?: boolean }
  ) => Effect.Effect<Option.Option<CheckRecord>, StoreError>
  /** A new pending check of a page; with `claim`, already claimed by that worker (a check run inside a request). */
  readonly createCheck: (input: {
    readonly uri: string
    readonly readsAnchors?: boolean
    readonly priority: CheckPriority
    readonly now: Date
    readonly claim?: { readonly workerId: string; readonly until: Date }
  }) => Effect.Effect<CheckRecord, StoreError>
  /**
   * New pending checks of those `pages` that have no check created at or after `reuseSince` (`null`: of every one)
   * that would serve them (as `NewBatch` reuses), in one atomic step; returns the checks it created. The first links of
   * a large batch start this way while the rest of the batch is written, and the batch reuses them.
   */
  readonly createChecks: (input: NewChecks) => Effect.Effect<ReadonlyArray<CheckRecord>, StoreError>
  /**
   * `createChecks`, claiming the new checks for `claim.workerId` in the same step, as `claimChecks` would were they the
   * only checks waiting: at most `claim.limit`, and of each host its first ones within what the request allows it
   * (`lowPriorityQuota` aside); none while another worker is alive, so that copies keep sharing the work out through
   * their claims. The others wait unclaimed. It saves the claim a large batch would otherwise wait for.
   */
  readonly createAndClaimChecks: (
    input: NewChecks & { readonly claim: ClaimRequest }
  ) => Effect.Effect<ClaimedNewChecks, StoreError>
  /** Creates the batch, reusing checks within the window and creating the others; completed at once if none is pending. */
  readonly createBatch: (batch: NewBatch) => Effect.Effect<BatchRecord, StoreError>
  /**
   * `createBatch`, claiming the checks it creates (not those it reuses) for `claim.workerId` in the same step, as
   * `createAndClaimChecks` claims them: a worker in the same process then starts them as soon as the batch is written.
   */
  readonly createAndClaimBatch: (
    batch: NewBatch & { readonly claim: ClaimRequest }
  ) => Effect.Effect<ClaimedNewBatch, StoreError>
  /** The batch with this id; with `owner`, only if that caller created it. */
  readonly findBatch: (id: number, owner?: string) => Effect.Effect<Option.Option<BatchRecord>, StoreError>
  /**
   * What a batch's webhook sends: its target, and its report as the JSON text of `BatchReport` (`./api`). The SQL
   * store builds the text in the database, which for a large batch costs a fraction of reading the rows and
   * encoding them.
   */
  readonly findWebhookReport: (id: number) => Effect.Effect<Option.Option<WebhookReport>, StoreError>
  /**
   * Claims pending checks that nobody holds (or whose holder's claim expired): high priority first, except that
   * `lowPriorityQuota` slots go to low priority first; never more per host than the request allows.
   */
  readonly claimChecks: (request: ClaimRequest) => Effect.Effect<ReadonlyArray<ClaimedCheck>, StoreError>
  readonly extendClaims: (
    workerId: string,
    ids: ReadonlyArray<string>,
    until: Date
  ) => Effect.Effect<void, StoreError>
  /** Hands claimed checks back unstarted (shutdown): they are claimable again at once and the attempt is not counted. */
  readonly releaseClaims: (workerId: string, ids: ReadonlyArray<string>) => Effect.Effect<void, StoreError>
  /**
   * Records the results of checks in one atomic step, each only if `workerId` still holds its claim (the others are
   * left alone), and completes the batches for which these were the last pending links.
   */
  readonly completeChecks: (input: {
    readonly workerId: string
    readonly now: Date
    readonly results: ReadonlyArray<CheckCompletion>
  }) => Effect.Effect<CompletedChecks, StoreError>
  /** Records one attempt; a `final` one ends the delivery in the same step. */
  readonly recordWebhookAttempt: (attempt: WebhookAttempt) => Effect.Effect<void, StoreError>
  readonly webhookAttempts: (batchId: number) => Effect.Effect<ReadonlyArray<WebhookAttempt>, StoreError>
  /**
   * Registers or renews a worker and renews the claims it is working on; any other claim in its name (one whose
   * answer was lost, say) is handed back.
   */
  readonly heartbeat: (heartbeat: WorkerHeartbeat) => Effect.Effect<void, StoreError>
  /** The workers registered from `hostname`, among them any earlier life of a process that restarted there. */
  readonly workersOn: (
    hostname: string
  ) => Effect.Effect<ReadonlyArray<{ readonly id: string; readonly pid: number }>, StoreError>
  /** Forgets workers that are gone and hands back the checks they held at once, without waiting for the claims to end. */
  readonly retireWorkers: (workerIds: ReadonlyArray<string>) => Effect.Effect<void, StoreError>
  /** What waits and who holds it, for health checks. */
  readonly workload: (now: Date) => Effect.Effect<Workload, StoreError>
  /** Deletes checks completed before `before`, and every batch that contains one of them. */
  readonly deleteCompletedBefore: (
    before: Date
  ) => Effect.Effect<{ readonly checks: number; readonly batches: number }, StoreError>
}>() {}
