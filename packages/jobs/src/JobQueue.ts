import type { Duration, Option, Stream } from "effect"
import { Context, Effect, Schema } from "effect"
import type { JobDefinition } from "./definition"
import type { JobQueueError } from "./errors"

export interface EnqueueOptions {
  /** Higher runs first (default 0). */
  readonly priority?: number
  /** Earliest time the job may run; takes precedence over `delay`. */
  readonly runAt?: Date
  readonly delay?: Duration.DurationInput
  /** While a job with this key is queued, running or waiting for a retry on the same queue, enqueueing again returns that job. */
  readonly dedupeKey?: string
  /** Overrides the definition's maxAttempts for this job. */
  readonly maxAttempts?: number
  /**
   * The W3C `traceparent` of the span the job's own span links to (default: the span enqueueing it, when a tracer
   * records spans). For work that belongs to an earlier request rather than to the code enqueueing it.
   */
  readonly traceParent?: string | null
}

export interface EnqueueItem<A> {
  readonly payload: A
  readonly options?: EnqueueOptions
}

export interface Enqueued {
  readonly id: string
  readonly deduplicated: boolean
}

/** One queue's figures. Encoded, the keys are snake_case, as SQL selects them and JSON APIs report them. */
export const QueueStats = Schema.Struct({
  queue: Schema.String,
  /** Runnable now. */
  queued: Schema.Number,
  /** Waiting for a future run-at time, including retries waiting for their backoff. */
  scheduled: Schema.Number,
  running: Schema.Number,
  dead: Schema.Number,
  /** Milliseconds since the oldest runnable job became runnable; null when none is runnable. */
  oldestRunnableAgeMs: Schema.propertySignature(Schema.NullOr(Schema.Number)).pipe(
    Schema.fromKey("oldest_runnable_age_ms")
  )
})
export interface QueueStats extends Schema.Schema.Type<typeof QueueStats> {}

/** Proof of ownership of a claimed job: operations with a stale token change nothing. */
export interface JobClaim {
  readonly id: string
  readonly claimToken: string
}

export interface ClaimedJob extends JobClaim {
  readonly queue: string
  /** The payload in its encoded (JSON) form. */
  readonly payload: unknown
  /** 1 on the first run. */
  readonly attempt: number
  readonly maxAttempts: number
  readonly priority: number
  /** The span the job's span links to, as a W3C `traceparent`. */
  readonly traceParent: string | null
}

export interface ClaimOptions {
  readonly queue: string
  readonly workerId: string
  /** 0 is allowed, to only complete `completed`. */
  readonly limit: number
  readonly leaseDuration: Duration.Duration
  /** Finished jobs to delete in the same statement, saving a round trip. */
  readonly completed?: ReadonlyArray<JobClaim>
}

export interface JobFailure {
  readonly error: string
  /** None: do not retry, the job is dead at once. */
  readonly retryAfter: Option.Option<Duration.Duration>
}

/** What became of a failed job; "lost" means the claim was stale (the job belongs to someone else now). */
export type FailOutcome = "retrying" | "dead" | "lost"

export interface DeadJob {
  readonly id: string
  readonly queue: string
  /** The payload in its encoded (JSON) form. */
  readonly payload: unknown
  readonly attempts: number
  readonly maxAttempts: number
  readonly lastError: string | null
  readonly failedAt: Date
}

export interface ScheduleSlot<A, I> {
  readonly name: string
  readonly slot: Date
  readonly definition: JobDefinition<A, I>
  readonly payload: A
}

export class JobQueue extends Context.Tag("@civicstack/jobs/JobQueue")<JobQueue, {
  /** On SQL backends this joins the caller's open transaction. */
  readonly enqueue: <A, I>(
    definition: JobDefinition<A, I>,
    payload: A,
    options?: EnqueueOptions
  ) => Effect.Effect<Enqueued, JobQueueError>
  /** One statement on SQL backends; results are in the order of `items`. */
  readonly enqueueMany: <A, I>(
    definition: JobDefinition<A, I>,
    items: ReadonlyArray<EnqueueItem<A>>
  ) => Effect.Effect<ReadonlyArray<Enqueued>, JobQueueError>
  /** One entry per queue that holds any job. */
  readonly stats: Effect.Effect<ReadonlyArray<QueueStats>, JobQueueError>

  /** Completes `completed`, then claims up to `limit` runnable jobs, highest priority first, and leases them to `workerId`. */
  readonly claim: (options: ClaimOptions) => Effect.Effect<ReadonlyArray<ClaimedJob>, JobQueueError>
  /** Deletes finished jobs. */
  readonly complete: (claims: ReadonlyArray<JobClaim>) => Effect.Effect<void, JobQueueError>
  readonly fail: (claim: JobClaim, failure: JobFailure) => Effect.Effect<FailOutcome, JobQueueError>
  readonly extendLeases: (
    claims: ReadonlyArray<JobClaim>,
    leaseDuration: Duration.Duration
  ) => Effect.Effect<void, JobQueueError>
  /** Hands claimed jobs back without counting the attempt. */
  readonly release: (claims: ReadonlyArray<JobClaim>) => Effect.Effect<void, JobQueueError>
  /** Makes jobs whose lease expired runnable again (or dead when that was their last attempt); returns how many. */
  readonly recoverExpiredLeases: (queue: string) => Effect.Effect<number, JobQueueError>
  /**
   * Ends the lease of every running job now, on every queue, so that recovery makes them runnable again at once (the
   * attempt counts, as for any expired lease); returns how many. Only for a start on a database no other process uses
   * (the embedded one), where every running job belongs to a process that is gone.
   */
  readonly endAllLeases: Effect.Effect<number, JobQueueError>
  /** Signals that new work may be available on `queue` (local enqueues and, on SQL with `listen`, other copies). */
  readonly wakeups: (queue: string) => Stream.Stream<void>
  /**
   * Wakes the `wakeups(name)` subscribers of this copy and, on SQL, of every copy that listens on the database, as an
   * enqueue on a queue of that name would: for work kept outside the job queue (rows of a service's own). Inside the
   * caller's transaction on SQL, the other copies are woken at its commit.
   */
  readonly signal: (name: string) => Effect.Effect<void, JobQueueError>

  /** Moves dead jobs back to queued with fresh attempts; returns how many. */
  readonly retryDead: (queue?: string) => Effect.Effect<number, JobQueueError>
  /** Most recently failed first. */
  readonly listDead: (queue: string, limit: number) => Effect.Effect<ReadonlyArray<DeadJob>, JobQueueError>

  /** Records a schedule with `slot` as its last fired slot, unless it is already known. */
  readonly ensureSchedule: (name: string, slot: Date) => Effect.Effect<void, JobQueueError>
  /** Enqueues the schedule's job when `slot` is later than its last fired slot; exactly one caller per slot gets true. */
  readonly fireSchedule: <A, I>(slot: ScheduleSlot<A, I>) => Effect.Effect<boolean, JobQueueError>
}>() {}

type Service = Context.Tag.Service<JobQueue>

/** `enqueue` as a one-item `enqueueMany`, which every adapter implements. */
export const enqueueOneWith = (enqueueMany: Service["enqueueMany"]): Service["enqueue"] =>
(definition, payload, options) =>
  Effect.map(
    enqueueMany(definition, [options === undefined ? { payload } : { payload, options }]),
    (enqueued) => enqueued[0]!
  )
