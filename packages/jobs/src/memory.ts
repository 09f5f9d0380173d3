import { Clock, Duration, Effect, Layer, Option, PubSub, Stream } from "effect"
import { newClaimToken } from "./claimToken"
import type { ClaimedJob, ClaimOptions, DeadJob, Enqueued, FailOutcome, JobClaim, JobFailure, QueueStats } from "./JobQueue"
import { enqueueOneWith, JobQueue } from "./JobQueue"
import { LEASE_EXPIRED_ERROR } from "./leases"
import type { PreparedJob } from "./prepare"
import { prepareJobs } from "./prepare"

interface StoredJob {
  readonly id: string
  readonly queue: string
  readonly payloadJson: string
  readonly priority: number
  readonly dedupeKey: string | null
  readonly createdAt: number
  readonly traceParent: string | null
  state: "queued" | "running" | "dead"
  runAt: number
  attempts: number
  maxAttempts: number
  lastError: string | null
  lockedBy: string | null
  lockedUntil: number | null
  claimToken: string | null
  failedAt: number | null
}

const dedupeIndexKey = (queue: string, key: string) => `${queue}\u0000${key}`

const byClaimOrder = (a: StoredJob, b: StoredJob) =>
  b.priority - a.priority || a.runAt - b.runAt || Number(a.id) - Number(b.id)

/** The first `limit` of `jobs` in claim order, without sorting them all: one pass keeping the best so far. */
const firstInClaimOrder = (jobs: Iterable<StoredJob>, limit: number): Array<StoredJob> => {
  const best: Array<StoredJob> = []
  if (limit <= 0) return best
  for (const job of jobs) {
    if (best.length === limit && byClaimOrder(job, best[limit - 1]!) >= 0) continue
    let low = 0
    let high = best.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if (byClaimOrder(best[middle]!, job) <= 0) low = middle + 1
      else high = middle
    }
    best.splice(low, 0, job)
    if (best.length > limit) best.pop()
  }
  return best
}

/** All state of the in-memory queue; every method runs synchronously, so each is atomic. */
class MemoryStore {
  private nextId = 1
  private readonly jobs = new Map<string, StoredJob>()
  /** Live (not dead) jobs by queue + dedupe key. */
  private readonly dedupe = new Map<string, string>()
  private readonly schedules = new Map<string, number>()

  insert(queue: string, prepared: ReadonlyArray<PreparedJob>, now: number): ReadonlyArray<Enqueued> {
    return prepared.map((job) => {
      const indexKey = job.dedupeKey === null ? null : dedupeIndexKey(queue, job.dedupeKey)
      const existing = indexKey === null ? undefined : this.dedupe.get(indexKey)
      if (existing !== undefined) return { id: existing, deduplicated: true }
      const id = String(this.nextId++)
      this.jobs.set(id, {
        id,
        queue,
        payloadJson: job.payloadJson,
        priority: job.priority,
        dedupeKey: job.dedupeKey,
        createdAt: now,
        traceParent: job.traceParent,
        state: "queued",
        runAt: job.runAt,
        attempts: 0,
        maxAttempts: job.maxAttempts,
        lastError: null,
        lockedBy: null,
        lockedUntil: null,
        claimToken: null,
        failedAt: null
      })
      if (indexKey !== null) this.dedupe.set(indexKey, id)
      return { id, deduplicated: false }
    })
  }

  claim(options: ClaimOptions, token: string, now: number): ReadonlyArray<ClaimedJob> {
    this.complete(options.completed ?? [])
    const claimable: Array<StoredJob> = []
    for (const job of this.jobs.values()) {
      if (job.queue === options.queue && job.state === "queued" && job.runAt <= now) claimable.push(job)
    }
    return firstInClaimOrder(claimable, options.limit).map((job) => {
      job.state = "running"
      job.attempts += 1
      job.lockedBy = options.workerId
      job.lockedUntil = now + Duration.toMillis(options.leaseDuration)
      job.claimToken = token
      return {
        id: job.id,
        claimToken: token,
        queue: job.queue,
        payload: JSON.parse(job.payloadJson),
        attempt: job.attempts,
        maxAttempts: job.maxAttempts,
        priority: job.priority,
        traceParent: job.traceParent
      }
    })
  }

  private owned(claim: JobClaim): StoredJob | undefined {
    const job = this.jobs.get(claim.id)
    return job !== undefined && job.claimToken === claim.claimToken ? job : undefined
  }

  private unlock(job: StoredJob) {
    job.lockedBy = null
    job.lockedUntil = null
    job.claimToken = null
  }

  private markDead(job: StoredJob, error: string, now: number) {
    job.state = "dead"
    job.lastError = error
    job.failedAt = now
    this.unlock(job)
    if (job.dedupeKey !== null) this.dedupe.delete(dedupeIndexKey(job.queue, job.dedupeKey))
  }

  complete(claims: ReadonlyArray<JobClaim>) {
    for (const claim of claims) {
      const job = this.owned(claim)
      if (job === undefined) continue
      this.jobs.delete(job.id)
      if (job.dedupeKey !== null) this.dedupe.delete(dedupeIndexKey(job.queue, job.dedupeKey))
    }
  }

  fail(claim: JobClaim, failure: JobFailure, now: number): FailOutcome {
    const job = this.owned(claim)
    if (job === undefined) return "lost"
    if (Option.isNone(failure.retryAfter) || job.attempts >= job.maxAttempts) {
      this.markDead(job, failure.error, now)
      return "dead"
    }
    job.state = "queued"
    job.lastError = failure.error
    job.runAt = now + Duration.toMillis(failure.retryAfter.value)
    this.unlock(job)
    return "retrying"
  }

  extendLeases(claims: ReadonlyArray<JobClaim>, lockedUntil: number) {
    for (const claim of claims) {
      const job = this.owned(claim)
      if (job !== undefined) job.lockedUntil = lockedUntil
    }
  }

  release(claims: ReadonlyArray<JobClaim>) {
    for (const claim of claims) {
      const job = this.owned(claim)
      if (job === undefined) continue
      job.state = "queued"
      job.attempts -= 1
      this.unlock(job)
    }
  }

  endAllLeases(now: number): number {
    let ended = 0
    for (const job of this.jobs.values()) {
      if (job.state !== "running" || job.lockedUntil === null || job.lockedUntil <= now) continue
      job.lockedUntil = now
      ended += 1
    }
    return ended
  }

  recoverExpiredLeases(queue: string, now: number): number {
    let recovered = 0
    for (const job of this.jobs.values()) {
      if (job.queue !== queue || job.state !== "running" || job.lockedUntil === null || job.lockedUntil > now) continue
      recovered += 1
      if (job.attempts >= job.maxAttempts) {
        this.markDead(job, LEASE_EXPIRED_ERROR, now)
      } else {
        job.state = "queued"
        job.lastError = LEASE_EXPIRED_ERROR
        this.unlock(job)
      }
    }
    return recovered
  }

  stats(now: number): ReadonlyArray<QueueStats> {
    const byQueue = new Map<string, { queued: number; scheduled: number; running: number; dead: number; oldestRunAt: number | null }>()
    for (const job of this.jobs.values()) {
      let entry = byQueue.get(job.queue)
      if (entry === undefined) {
        entry = { queued: 0, scheduled: 0, running: 0, dead: 0, oldestRunAt: null }
        byQueue.set(job.queue, entry)
      }
      if (job.state === "running") entry.running += 1
      else if (job.state === "dead") entry.dead += 1
      else if (job.runAt > now) entry.scheduled += 1
      else {
        entry.queued += 1
        entry.oldestRunAt = Math.min(entry.oldestRunAt ?? job.runAt, job.runAt)
      }
    }
    return [...byQueue.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([queue, { oldestRunAt, ...counts }]) => ({
        queue,
        ...counts,
        oldestRunnableAgeMs: oldestRunAt === null ? null : now - oldestRunAt
      }))
  }

  retryDead(queue: string | undefined, now: number): number {
    let retried = 0
    for (const job of this.jobs.values()) {
      if (job.state !== "dead" || (queue !== undefined && job.queue !== queue)) continue
      if (job.dedupeKey !== null) {
        const indexKey = dedupeIndexKey(job.queue, job.dedupeKey)
        if (this.dedupe.has(indexKey)) continue
        this.dedupe.set(indexKey, job.id)
      }
      job.state = "queued"
      job.attempts = 0
      job.runAt = now
      job.lastError = null
      job.failedAt = null
      retried += 1
    }
    return retried
  }

  listDead(queue: string, limit: number): ReadonlyArray<DeadJob> {
    const dead: Array<StoredJob> = []
    for (const job of this.jobs.values()) {
      if (job.queue === queue && job.state === "dead") dead.push(job)
    }
    return dead
      .sort((a, b) => (b.failedAt ?? 0) - (a.failedAt ?? 0) || Number(b.id) - Number(a.id))
      .slice(0, limit)
      .map((job) => ({
        id: job.id,
        queue: job.queue,
        payload: JSON.parse(job.payloadJson),
        attempts: job.attempts,
        maxAttempts: job.maxAttempts,
        lastError: job.lastError,
        failedAt: new Date(job.failedAt ?? job.createdAt)
      }))
  }

  ensureSchedule(name: string, slot: number) {
    if (!this.schedules.has(name)) this.schedules.set(name, slot)
  }

  /** Advances the schedule's last slot; true when this call moved it. */
  advanceSchedule(name: string, slot: number): boolean {
    const last = this.schedules.get(name)
    if (last !== undefined && last >= slot) return false
    this.schedules.set(name, slot)
    return true
  }
}

/** An in-process job queue for tests and single-process use: nothing survives a restart and enqueue joins no transaction. */
export const layerMemory: Layer.Layer<JobQueue> = Layer.effect(
  JobQueue,
  Effect.gen(function*() {
    const store = new MemoryStore()
    const enqueuedQueues = yield* PubSub.unbounded<string>()
    const withNow = <A>(f: (now: number) => A) => Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sync(() => f(now)))

    const enqueueMany: JobQueue["Type"]["enqueueMany"] = (definition, items) =>
      Effect.gen(function*() {
        const prepared = yield* prepareJobs(definition, items)
        const enqueued = yield* withNow((now) => store.insert(definition.queue, prepared, now))
        if (enqueued.some((job) => !job.deduplicated)) yield* PubSub.publish(enqueuedQueues, definition.queue)
        return enqueued
      })

    return JobQueue.of({
      enqueue: enqueueOneWith(enqueueMany),
      enqueueMany,
      stats: withNow((now) => store.stats(now)),
      claim: (options) =>
        Effect.flatMap(newClaimToken, (token) => withNow((now) => store.claim(options, token, now))),
      complete: (claims) => Effect.sync(() => store.complete(claims)),
      fail: (claim, failure) => withNow((now) => store.fail(claim, failure, now)),
      extendLeases: (claims, leaseDuration) =>
        withNow((now) => store.extendLeases(claims, now + Duration.toMillis(leaseDuration))),
      release: (claims) => Effect.sync(() => store.release(claims)),
      recoverExpiredLeases: (queue) => withNow((now) => store.recoverExpiredLeases(queue, now)),
      endAllLeases: withNow((now) => store.endAllLeases(now)),
      wakeups: (queue) =>
        Stream.fromPubSub(enqueuedQueues).pipe(
          Stream.filter((enqueuedQueue) => enqueuedQueue === queue),
          Stream.as(undefined)
        ),
      signal: (name) => Effect.asVoid(PubSub.publish(enqueuedQueues, name)),
      retryDead: (queue) => withNow((now) => store.retryDead(queue, now)),
      listDead: (queue, limit) => Effect.sync(() => store.listDead(queue, limit)),
      ensureSchedule: (name, slot) => Effect.sync(() => store.ensureSchedule(name, slot.getTime())),
      fireSchedule: ({ definition, name, payload, slot }) =>
        Effect.gen(function*() {
          const prepared = yield* prepareJobs(definition, [{ payload }])
          const fired = yield* withNow((now) => {
            if (!store.advanceSchedule(name, slot.getTime())) return false
            store.insert(definition.queue, prepared, now)
            return true
          })
          if (fired) yield* PubSub.publish(enqueuedQueues, definition.queue)
          return fired
        })
    })
  })
)
