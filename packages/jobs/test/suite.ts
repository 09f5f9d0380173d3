import { describe, expect, it } from "@effect/vitest"
import { Clock, Deferred, Duration, Effect, Exit, Fiber, Layer, Option, Ref, Schema, Scope, Stream, TestClock } from "effect"
import type { ClaimedJob, JobInfo, QueueStats } from "../src/index"
import { JobDefinition, JobQueue, runSchedules, runWorker, schedulesLayer, workerLayer } from "../src/index"
import { recordingTracer } from "@civicstack/kit/testing"
import type { SuiteEffect } from "./helpers"
import { eventually, realPause, sleepersAtLeast, TestBackend } from "./helpers"

export interface SuiteOptions {
  /** The backend stores jobs in a database whose transactions enqueue joins. */
  readonly transactional: boolean
}

const Email = Schema.Struct({ to: Schema.String })
const email = JobDefinition.make({ queue: "email", payload: Email })

const claimAll = (queue: string, workerId = "test-worker", leaseDuration: Duration.DurationInput = "30 seconds") =>
  Effect.flatMap(JobQueue, (jobs) =>
    jobs.claim({ queue, workerId, limit: 100, leaseDuration: Duration.decode(leaseDuration) }))

const statsOf = (queue: string) =>
  Effect.map(
    Effect.flatMap(JobQueue, (jobs) => jobs.stats),
    (all): QueueStats | undefined => all.find((entry) => entry.queue === queue)
  )

/** Jobs of `queue` that exist in any state. */
const countJobs = (queue: string) =>
  Effect.map(statsOf(queue), (stats) =>
    stats === undefined ? 0 : stats.queued + stats.scheduled + stats.running + stats.dead)

const payloadsOf = (claimed: ReadonlyArray<ClaimedJob>) => claimed.map((job) => job.payload)

/**
 * A worker on the second copy that polls only hourly, after it ran a first job ("before"): whatever it runs next,
 * a wake-up brought it. Returns what it handled.
 */
const idleWorkerOnSecondCopy = Effect.gen(function*() {
  const jobs = yield* JobQueue
  const { secondCopy } = yield* TestBackend
  const handled = yield* Ref.make<ReadonlyArray<string>>([])
  yield* jobs.enqueue(email, { to: "before" })
  yield* Effect.forkScoped(
    runWorker(email, ({ to }) => Ref.update(handled, (all) => [...all, to]), { pollInterval: "1 hour" }).pipe(
      Effect.provide(secondCopy)
    )
  )
  yield* eventually(Effect.map(Ref.get(handled), (all) => all.length === 1), { what: "the first job" })
  return handled
})

export const jobQueueSuite = (
  name: string,
  layer: Layer.Layer<JobQueue | TestBackend, unknown>,
  options: SuiteOptions
) => {
  const test = (title: string, body: () => SuiteEffect) =>
    it.effect(title, () => Effect.scoped(body()).pipe(Effect.provide(layer)))

  describe(`JobQueue on ${name}`, () => {
    if (options.transactional) {
      test("an enqueue inside a transaction exists exactly when the transaction commits", () =>
        Effect.gen(function*() {
          const jobs = yield* JobQueue
          const inTransaction = Option.getOrThrow((yield* TestBackend).transaction)

          const aborted = yield* inTransaction(
            Effect.zipRight(jobs.enqueue(email, { to: "rolled-back@example.com" }), Effect.fail("abort" as const))
          ).pipe(Effect.flip)
          expect(aborted).toBe("abort")
          expect(yield* jobs.stats).toEqual([])

          const committed = yield* inTransaction(jobs.enqueue(email, { to: "committed@example.com" }))
          const claimed = yield* claimAll("email")
          expect(claimed.map((job) => job.id)).toEqual([committed.id])
          expect(payloadsOf(claimed)).toEqual([{ to: "committed@example.com" }])
        }))
    }

    test("runs jobs with a higher priority first, then in order of enqueueing", () =>
      Effect.gen(function*() {
        const jobs = yield* JobQueue
        yield* jobs.enqueue(email, { to: "low" }, { priority: -1 })
        yield* jobs.enqueue(email, { to: "normal-1" })
        yield* jobs.enqueue(email, { to: "high" }, { priority: 10 })
        yield* jobs.enqueue(email, { to: "normal-2" }, { priority: 0 })

        const order = yield* Ref.make<ReadonlyArray<string>>([])
        yield* Effect.forkScoped(runWorker(email, ({ to }) => Ref.update(order, (done) => [...done, to])))
        yield* eventually(Effect.map(Ref.get(order), (done) => done.length === 4), { what: "four jobs" })
        expect(yield* Ref.get(order)).toEqual(["high", "normal-1", "normal-2", "low"])
        yield* eventually(Effect.map(jobs.stats, (stats) => stats.length === 0), { what: "completed jobs deleted" })
      }))

    test("a job's span links to the span that enqueued it, or to the trace parent given instead", () => {
      const { ended, tracer } = recordingTracer()
      const givenParent = `00-${"ab".repeat(16)}-${"cd".repeat(8)}-01`
      return Effect.gen(function*() {
        const jobs = yield* JobQueue
        const [request, fromRequest] = yield* Effect.zip(Effect.currentSpan, jobs.enqueue(email, { to: "a" })).pipe(
          Effect.withSpan("request")
        )
        const given = yield* jobs.enqueue(email, { to: "b" }, { traceParent: givenParent }).pipe(Effect.withSpan("other"))
        const unlinked = yield* jobs.enqueue(email, { to: "c" }, { traceParent: null }).pipe(Effect.withSpan("other"))
        const outsideAnySpan = yield* jobs.enqueue(email, { to: "d" })

        yield* Effect.forkScoped(runWorker(email, () => Effect.void))
        const jobSpans = () => ended.filter((span) => span.name === "job email")
        yield* eventually(Effect.sync(() => jobSpans().length === 4), { what: "four job spans" })

        const linksOf = (job: { readonly id: string }) =>
          jobSpans().find((span) => span.attributes.get("job.id") === job.id)?.links
        expect(linksOf(fromRequest)).toEqual([{ traceId: request.traceId, spanId: request.spanId }])
        expect(linksOf(given)).toEqual([{ traceId: "ab".repeat(16), spanId: "cd".repeat(8) }])
        expect(linksOf(unlinked)).toEqual([])
        expect(linksOf(outsideAnySpan)).toEqual([])
        // each job's span starts a trace of its own
        expect(jobSpans().map((span) => span.parentSpanId)).toEqual([undefined, undefined, undefined, undefined])
      }).pipe(Effect.withTracer(tracer))
    })

    test("signal wakes the wakeups of its name in this copy and in another", () =>
      Effect.gen(function*() {
        const jobs = yield* JobQueue
        const { secondCopy } = yield* TestBackend
        const wokenHere = yield* Deferred.make<void>()
        const wokenThere = yield* Deferred.make<void>()
        const firstWakeup = (queue: JobQueue["Type"], woken: Deferred.Deferred<void>) =>
          queue.wakeups("rows").pipe(Stream.take(1), Stream.runDrain, Effect.zipRight(Deferred.succeed(woken, undefined)))
        yield* Effect.forkScoped(firstWakeup(jobs, wokenHere))
        yield* Effect.forkScoped(Effect.flatMap(JobQueue, (other) => firstWakeup(other, wokenThere)).pipe(Effect.provide(secondCopy)))
        // the subscriptions start listening as they start: signal until both have heard one
        yield* eventually(
          Effect.zipRight(jobs.signal("rows"), Effect.map(Effect.all([Deferred.isDone(wokenHere), Deferred.isDone(wokenThere)]), (done) => done.every(Boolean))),
          { what: "both copies woken" }
        )
        expect(yield* jobs.stats).toEqual([])
      }))

    test("does not run a job before its run-at time", () =>
      Effect.gen(function*() {
        const jobs = yield* JobQueue
        yield* TestClock.setTime(Date.parse("2025-01-01T00:00:00Z"))
        yield* jobs.enqueue(email, { to: "in-ten-seconds" }, { delay: "10 seconds" })
        yield* jobs.enqueue(email, { to: "at-five-seconds" }, { runAt: new Date("2025-01-01T00:00:05Z") })

        expect(yield* claimAll("email")).toEqual([])
        expect(yield* statsOf("email")).toMatchObject({ queued: 0, scheduled: 2, oldestRunnableAgeMs: null })

        yield* TestClock.adjust("5 seconds")
        expect(payloadsOf(yield* claimAll("email"))).toEqual([{ to: "at-five-seconds" }])
        yield* TestClock.adjust("4999 millis")
        expect(yield* claimAll("email")).toEqual([])
        yield* TestClock.adjust("1 millis")
        expect(payloadsOf(yield* claimAll("email"))).toEqual([{ to: "in-ten-seconds" }])
      }))

    test("a dedupe key returns the live job until it completes or dies", () =>
      Effect.gen(function*() {
        const jobs = yield* JobQueue
        const first = yield* jobs.enqueue(email, { to: "a" }, { dedupeKey: "welcome:1" })
        expect(first.deduplicated).toBe(false)
        expect(yield* jobs.enqueue(email, { to: "b" }, { dedupeKey: "welcome:1" })).toEqual({
          id: first.id,
          deduplicated: true
        })
        const otherQueue = JobDefinition.make({ queue: "sms", payload: Email })
        expect((yield* jobs.enqueue(otherQueue, { to: "c" }, { dedupeKey: "welcome:1" })).deduplicated).toBe(false)

        const [running] = yield* claimAll("email")
        expect(running?.payload).toEqual({ to: "a" })
        expect((yield* jobs.enqueue(email, { to: "d" }, { dedupeKey: "welcome:1" })).id).toBe(first.id)
        yield* jobs.complete([running!])

        const second = yield* jobs.enqueue(email, { to: "e" }, { dedupeKey: "welcome:1" })
        expect(second.deduplicated).toBe(false)
        expect(second.id).not.toBe(first.id)
        const [failing] = yield* claimAll("email")
        expect(yield* jobs.fail(failing!, { error: "permanent", retryAfter: Option.none() })).toBe("dead")

        const third = yield* jobs.enqueue(email, { to: "f" }, { dedupeKey: "welcome:1" })
        expect(third.deduplicated).toBe(false)
        expect(third.id).not.toBe(second.id)
      }))

    test("enqueueMany returns one result per item in order, deduplicating within the batch", () =>
      Effect.gen(function*() {
        const jobs = yield* JobQueue
        const results = yield* jobs.enqueueMany(email, [
          { payload: { to: "1" } },
          { payload: { to: "2" }, options: { dedupeKey: "k" } },
          { payload: { to: "3" }, options: { dedupeKey: "k" } },
          { payload: { to: "4" }, options: { priority: 5 } }
        ])
        expect(results.map((result) => result.deduplicated)).toEqual([false, false, true, false])
        expect(results[2]!.id).toBe(results[1]!.id)
        expect(new Set(results.map((result) => result.id)).size).toBe(3)
        expect(yield* jobs.enqueueMany(email, [])).toEqual([])

        const claimed = yield* claimAll("email")
        expect(payloadsOf(claimed)).toEqual([{ to: "4" }, { to: "1" }, { to: "2" }])
        expect(claimed.map((job) => job.id)).toEqual([results[3]!.id, results[0]!.id, results[1]!.id])
      }))

    test("concurrent enqueues on two queues each get their own job, or the live job of their dedupe key", () =>
      Effect.gen(function*() {
        const jobs = yield* JobQueue
        const sms = JobDefinition.make({ queue: "sms", payload: Email })
        const calls = Array.from({ length: 60 }, (_, n) => {
          const definition = n % 2 === 0 ? email : sms
          const options = n % 3 === 0 ? { dedupeKey: "shared" } : {}
          return Effect.map(jobs.enqueue(definition, { to: `${n}` }, options), (result) => ({ n, ...result }))
        })
        const results = yield* Effect.all(calls, { concurrency: "unbounded" })
        const claimed = [...(yield* claimAll("email")), ...(yield* claimAll("sms"))]
        const payloadById = new Map(claimed.map((job) => [job.id, job.payload]))
        const fresh = results.filter((result) => !result.deduplicated)
        const duplicates = results.filter((result) => result.deduplicated)
        // one job per queue for the shared key: 60 calls, 20 with the key, 10 of them per queue
        expect(fresh).toHaveLength(42)
        expect(claimed).toHaveLength(42)
        for (const { id, n } of fresh) expect(payloadById.get(id)).toEqual({ to: `${n}` })
        for (const { id, n } of duplicates) {
          expect(n % 3).toBe(0)
          expect(payloadById.get(id)).toMatchObject({ to: expect.any(String) })
          const keeper = fresh.find((result) => result.id === id)!
          expect(keeper.n % 2).toBe(n % 2)
        }
      }))

    test("concurrent enqueueMany calls of many jobs each get their own jobs, in order", () =>
      Effect.gen(function*() {
        const jobs = yield* JobQueue
        const counted = JobDefinition.make({ queue: "counted", payload: Schema.Number })
        const calls = [0, 1, 2].map((call) =>
          jobs.enqueueMany(counted, Array.from({ length: 600 }, (_, n) => ({ payload: call * 1000 + n }))))
        const results = yield* Effect.all(calls, { concurrency: "unbounded" })
        const claimed = yield* Effect.flatMap(JobQueue, (queue) =>
          queue.claim({ queue: "counted", workerId: "w", limit: 2000, leaseDuration: Duration.seconds(30) }))
        const payloadById = new Map(claimed.map((job) => [job.id, job.payload]))
        expect(claimed).toHaveLength(1800)
        results.forEach((enqueued, call) =>
          expect(enqueued.map((result) => payloadById.get(result.id))).toEqual(
            Array.from({ length: 600 }, (_, n) => call * 1000 + n)
          )
        )
      }))

    test("refuses a payload that its schema cannot encode, and bad options", () =>
      Effect.gen(function*() {
        const jobs = yield* JobQueue
        const counted = JobDefinition.make({ queue: "count", payload: Schema.Struct({ n: Schema.Int }) })
        const badPayload = yield* Effect.flip(jobs.enqueue(counted, { n: 1.5 }))
        expect(badPayload._tag).toBe("JobQueueError")
        expect(badPayload.message).toContain("does not match its schema")
        const badPriority = yield* Effect.flip(jobs.enqueue(counted, { n: 1 }, { priority: 0.5 }))
        expect(badPriority.message).toContain("priority")
        expect(yield* jobs.stats).toEqual([])
      }))

    test("a worker given a count that is not a finite number stops at once with a defect naming it", () =>
      Effect.gen(function*() {
        const defect = yield* runWorker(email, () => Effect.void, { concurrency: Number.NaN }).pipe(
          Effect.catchAllDefect(Effect.succeed)
        )
        expect(String(defect)).toContain("runWorker: concurrency must be a finite number (got NaN)")
      }))

    test("a failed job is not claimable before its retry delay and dies after its last attempt", () =>
      Effect.gen(function*() {
        const jobs = yield* JobQueue
        const flaky = JobDefinition.make({ queue: "flaky", payload: Schema.Number, maxAttempts: 2 })
        const { id } = yield* jobs.enqueue(flaky, 7)

        const [first] = yield* claimAll("flaky")
        expect(first).toMatchObject({ id, attempt: 1, maxAttempts: 2 })
        expect(yield* jobs.fail(first!, { error: "boom 1", retryAfter: Option.some(Duration.seconds(1)) })).toBe(
          "retrying"
        )
        expect(yield* statsOf("flaky")).toMatchObject({ queued: 0, scheduled: 1, running: 0 })

        yield* TestClock.adjust("999 millis")
        expect(yield* claimAll("flaky")).toEqual([])
        yield* TestClock.adjust("1 millis")
        const [second] = yield* claimAll("flaky")
        expect(second).toMatchObject({ id, attempt: 2 })
        expect(yield* jobs.fail(second!, { error: "boom 2", retryAfter: Option.some(Duration.seconds(1)) })).toBe(
          "dead"
        )

        const dead = yield* jobs.listDead("flaky", 10)
        expect(dead).toHaveLength(1)
        expect(dead[0]).toMatchObject({ id, payload: 7, attempts: 2, maxAttempts: 2, lastError: "boom 2" })
        yield* TestClock.adjust("1 hour")
        expect(yield* claimAll("flaky")).toEqual([])
      }))

    test("a worker retries a failing job with exponential backoff, then keeps it as dead", () =>
      Effect.gen(function*() {
        const jobs = yield* JobQueue
        const failing = JobDefinition.make({
          queue: "failing",
          payload: Schema.String,
          maxAttempts: 3,
          backoff: { base: "1 second", max: "1 hour" }
        })
        const starts = yield* Ref.make<ReadonlyArray<number>>([])
        yield* jobs.enqueue(failing, "payload")
        yield* Effect.forkScoped(runWorker(
          failing,
          (_, job) =>
            Clock.currentTimeMillis.pipe(
              Effect.flatMap((now) => Ref.update(starts, (all) => [...all, now])),
              Effect.zipRight(Effect.fail(`boom ${job.attempt}`))
            ),
          { pollInterval: "50 millis" }
        ))
        const waitingAfter = (attempts: number) =>
          eventually(
            Effect.zipWith(Ref.get(starts), statsOf("failing"), (all, stats) =>
              all.length === attempts && stats?.scheduled === 1),
            { what: `attempt ${attempts} to fail` }
          )

        // the delay before attempt n + 1 is between base * 2^(n-1) and 1.2 times that, counted from the failure
        yield* waitingAfter(1)
        const [first] = yield* Ref.get(starts)
        yield* TestClock.setTime(first! + 999)
        yield* realPause(50)
        expect(yield* Ref.get(starts)).toHaveLength(1)
        yield* TestClock.setTime(first! + 1250)
        yield* waitingAfter(2)
        const [, second] = yield* Ref.get(starts)
        expect(second! - first!).toBeGreaterThanOrEqual(1000)
        expect(second! - first!).toBeLessThanOrEqual(1250)

        const secondFailedBy = yield* Clock.currentTimeMillis
        yield* TestClock.setTime(second! + 1999)
        yield* realPause(50)
        expect(yield* Ref.get(starts)).toHaveLength(2)
        yield* TestClock.setTime(secondFailedBy + 2450)
        yield* eventually(Effect.map(statsOf("failing"), (stats) => stats?.dead === 1), { what: "the job to die" })
        const [, , third] = yield* Ref.get(starts)
        expect(third! - second!).toBeGreaterThanOrEqual(2000)
        expect(third!).toBeLessThanOrEqual(secondFailedBy + 2450)

        const [dead] = yield* jobs.listDead("failing", 10)
        expect(dead).toMatchObject({ attempts: 3, maxAttempts: 3, payload: "payload" })
        expect(dead?.lastError).toContain("boom 3")
        expect(yield* statsOf("failing")).toMatchObject({ queued: 0, scheduled: 0, running: 0, dead: 1 })
      }))

    test("a worker survives a handler that dies, and the job is retried", () =>
      Effect.gen(function*() {
        const jobs = yield* JobQueue
        const fragile = JobDefinition.make({ queue: "fragile", payload: Schema.String })
        const attempts = yield* Ref.make<ReadonlyArray<number>>([])
        yield* jobs.enqueue(fragile, "x")
        yield* Effect.forkScoped(runWorker(
          fragile,
          (_, job) =>
            Ref.update(attempts, (all) => [...all, job.attempt]).pipe(
              Effect.zipRight(job.attempt === 1 ? Effect.die(new Error("kaput")) : Effect.void)
            ),
          { pollInterval: "100 millis" }
        ))
        yield* eventually(Effect.map(jobs.stats, (stats) => stats.length === 0), {
          step: "100 millis",
          what: "the retried job to complete"
        })
        expect(yield* Ref.get(attempts)).toEqual([1, 2])
      }))

    test("a payload that does not decode makes the job dead at once", () =>
      Effect.gen(function*() {
        const jobs = yield* JobQueue
        const loose = JobDefinition.make({ queue: "email", payload: Schema.Unknown })
        const { id } = yield* jobs.enqueue(loose, { recipient: 42 })
        const handled = yield* Ref.make(0)
        yield* Effect.forkScoped(runWorker(email, () => Ref.update(handled, (n) => n + 1)))

        yield* eventually(Effect.map(statsOf("email"), (stats) => stats?.dead === 1), { what: "the job to die" })
        const [dead] = yield* jobs.listDead("email", 10)
        expect(dead).toMatchObject({ id, attempts: 1, payload: { recipient: 42 } })
        expect(dead?.lastError).toContain("does not match the schema")
        expect(yield* Ref.get(handled)).toBe(0)
      }))

    test("completion and failure are fenced by the claim token", () =>
      Effect.gen(function*() {
        const jobs = yield* JobQueue
        const lease = Duration.seconds(10)
        yield* jobs.enqueue(email, { to: "x" })
        const [stale] = yield* claimAll("email", "worker-a", lease)

        yield* TestClock.adjust("9999 millis")
        expect(yield* jobs.recoverExpiredLeases("email")).toBe(0)
        yield* TestClock.adjust("1 millis")
        expect(yield* jobs.recoverExpiredLeases("email")).toBe(1)
        const [current] = yield* claimAll("email", "worker-b", lease)
        expect(current).toMatchObject({ id: stale!.id, attempt: 2 })
        expect(current!.claimToken).not.toBe(stale!.claimToken)

        yield* jobs.complete([stale!])
        expect(yield* jobs.fail(stale!, { error: "late", retryAfter: Option.none() })).toBe("lost")
        yield* jobs.release([stale!])
        yield* jobs.extendLeases([stale!], Duration.hours(1))
        expect(yield* statsOf("email")).toMatchObject({ queued: 0, running: 1, dead: 0 })

        yield* TestClock.adjust("5 seconds")
        yield* jobs.extendLeases([current!], lease)
        yield* TestClock.adjust("9 seconds")
        expect(yield* jobs.recoverExpiredLeases("email")).toBe(0)
        yield* jobs.complete([current!])
        expect(yield* jobs.stats).toEqual([])
      }))

    test("a job whose lease expires on its last attempt is kept as dead", () =>
      Effect.gen(function*() {
        const jobs = yield* JobQueue
        const once = JobDefinition.make({ queue: "once", payload: Schema.String, maxAttempts: 1 })
        yield* jobs.enqueue(once, "x")
        yield* claimAll("once", "crashed", "5 seconds")
        yield* TestClock.adjust("5 seconds")
        expect(yield* jobs.recoverExpiredLeases("once")).toBe(1)
        const [dead] = yield* jobs.listDead("once", 10)
        expect(dead).toMatchObject({ attempts: 1 })
        expect(dead?.lastError).toContain("lease expired")
      }))

    test("ending every lease makes the running jobs of every queue recoverable at once, each attempt counted", () =>
      Effect.gen(function*() {
        const jobs = yield* JobQueue
        const first = JobDefinition.make({ queue: "ended-1", payload: Schema.String, maxAttempts: 1 })
        const second = JobDefinition.make({ queue: "ended-2", payload: Schema.String })
        yield* jobs.enqueue(first, "a")
        yield* jobs.enqueue(second, "b")
        yield* jobs.enqueue(second, "c")
        yield* claimAll("ended-1", "gone", "10 minutes")
        const [claimed] = yield* jobs.claim({ queue: "ended-2", workerId: "gone", limit: 1, leaseDuration: Duration.minutes(10) })
        expect(yield* jobs.recoverExpiredLeases("ended-2")).toBe(0)
        expect(yield* jobs.endAllLeases).toBe(2)
        expect(yield* jobs.recoverExpiredLeases("ended-1")).toBe(1)
        expect(yield* jobs.recoverExpiredLeases("ended-2")).toBe(1)
        // its one attempt was used: dead; the other runs again as its second attempt, the queued one untouched
        expect((yield* jobs.listDead("ended-1", 10)).map((job) => job.payload)).toEqual(["a"])
        const again = yield* claimAll("ended-2")
        expect(again.map((job) => [job.id === claimed!.id, job.attempt]).sort()).toEqual([[false, 1], [true, 2]])
        expect(yield* jobs.endAllLeases).toBe(2)
        expect(yield* jobs.endAllLeases).toBe(0)
      }))

    test("a job claimed by a worker that died runs again once its lease expires", () =>
      Effect.gen(function*() {
        const jobs = yield* JobQueue
        const leased = JobDefinition.make({ queue: "leased", payload: Schema.String, leaseDuration: "10 seconds" })
        yield* jobs.enqueue(leased, "x")
        const claimedAt = yield* Clock.currentTimeMillis
        const [abandoned] = yield* claimAll("leased", "crashed-worker", leased.leaseDuration)
        expect(abandoned?.attempt).toBe(1)

        const runs = yield* Ref.make<ReadonlyArray<{ readonly job: JobInfo; readonly at: number }>>([])
        yield* Effect.forkScoped(runWorker(
          leased,
          (_, job) => Effect.flatMap(Clock.currentTimeMillis, (at) => Ref.update(runs, (all) => [...all, { job, at }])),
          { pollInterval: "1 second" }
        ))
        yield* eventually(Effect.map(Ref.get(runs), (all) => all.length === 1), {
          step: "500 millis",
          what: "the job to run again"
        })
        const [run] = yield* Ref.get(runs)
        expect(run?.job).toMatchObject({ id: abandoned!.id, attempt: 2, queue: "leased" })
        expect(run!.at - claimedAt).toBeGreaterThanOrEqual(10_000)
        yield* eventually(Effect.map(jobs.stats, (stats) => stats.length === 0), { what: "the job to complete" })
      }))

    test("heartbeats keep a slow job's lease, so no other worker takes it", () =>
      Effect.gen(function*() {
        const jobs = yield* JobQueue
        const { secondCopy } = yield* TestBackend
        const slow = JobDefinition.make({ queue: "slow", payload: Schema.String, leaseDuration: "6 seconds" })
        const runs = yield* Ref.make(0)
        const handler = () => Ref.update(runs, (n) => n + 1).pipe(Effect.zipRight(Effect.sleep("10 seconds")))
        yield* jobs.enqueue(slow, "x")
        yield* Effect.forkScoped(runWorker(slow, handler, { pollInterval: "50 millis", workerId: "one" }))
        yield* eventually(Effect.map(Ref.get(runs), (n) => n === 1), { what: "the job to start" })
        yield* Effect.forkScoped(
          runWorker(slow, handler, { pollInterval: "50 millis", workerId: "two" }).pipe(Effect.provide(secondCopy))
        )
        yield* eventually(Effect.map(jobs.stats, (stats) => stats.length === 0), {
          step: "50 millis",
          what: "the slow job to complete"
        })
        expect(yield* Ref.get(runs)).toBe(1)
      }))

    test("a worker on another copy wakes up on an enqueue instead of waiting for its next poll", () =>
      Effect.gen(function*() {
        const jobs = yield* JobQueue
        const handled = yield* idleWorkerOnSecondCopy
        yield* realPause(100)
        yield* jobs.enqueue(email, { to: "after" })
        yield* eventually(Effect.map(Ref.get(handled), (all) => all.length === 2), { what: "a wake-up" })
        expect(yield* Ref.get(handled)).toEqual(["before", "after"])
      }))

    if (options.transactional) {
      test("a worker on another copy wakes up when a transaction that enqueued commits", () =>
        Effect.gen(function*() {
          const jobs = yield* JobQueue
          const inTransaction = Option.getOrThrow((yield* TestBackend).transaction)
          const handled = yield* idleWorkerOnSecondCopy
          yield* inTransaction(jobs.enqueue(email, { to: "committed" }).pipe(Effect.zipLeft(realPause(200))))
          yield* eventually(Effect.map(Ref.get(handled), (all) => all.length === 2), { what: "a wake-up after commit" })
          expect(yield* Ref.get(handled)).toEqual(["before", "committed"])
        }))
    }

    if (options.transactional) {
      test("a worker woken by an enqueue in a transaction claims after the commit, not before it for nothing", () =>
        Effect.gen(function*() {
          const jobs = yield* JobQueue
          const inTransaction = Option.getOrThrow((yield* TestBackend).transaction)
          const handled = yield* Ref.make<ReadonlyArray<string>>([])
          const claims = yield* Ref.make(0)
          const countingClaims = JobQueue.of({
            ...jobs,
            claim: (claimOptions) => Effect.zipRight(Ref.update(claims, (n) => n + 1), jobs.claim(claimOptions))
          })
          yield* jobs.enqueue(email, { to: "before" })
          yield* Effect.forkScoped(
            runWorker(email, ({ to }) => Ref.update(handled, (all) => [...all, to]), { pollInterval: "1 hour" }).pipe(
              Effect.provideService(JobQueue, countingClaims)
            )
          )
          yield* eventually(Effect.map(Ref.get(handled), (all) => all.length === 1), { what: "the first job" })
          yield* realPause(300)
          const claimsBefore = yield* Ref.get(claims)
          yield* inTransaction(
            jobs.enqueue(email, { to: "committed" }).pipe(
              Effect.zipLeft(realPause(300)),
              Effect.zipLeft(Effect.flatMap(Ref.get(claims), (n) => Effect.sync(() => expect(n).toBe(claimsBefore))))
            )
          )
          yield* eventually(Effect.map(Ref.get(handled), (all) => all.length === 2), { what: "a wake-up after commit" })
          expect(yield* Ref.get(handled)).toEqual(["before", "committed"])
        }))
    }

    test("two workers on two copies run each of 240 jobs exactly once, never twice at the same time", () =>
      Effect.gen(function*() {
        const jobs = yield* JobQueue
        const { secondCopy } = yield* TestBackend
        const work = JobDefinition.make({ queue: "work", payload: Schema.Number })
        yield* jobs.enqueueMany(work, Array.from({ length: 240 }, (_, n) => ({ payload: n })))

        const running = new Set<number>()
        const runsPerJob = new Map<number, number>()
        let overlaps = 0
        const handler = (n: number) =>
          Effect.gen(function*() {
            if (running.has(n)) overlaps += 1
            running.add(n)
            runsPerJob.set(n, (runsPerJob.get(n) ?? 0) + 1)
            for (let i = 0; i < 3; i++) yield* Effect.yieldNow()
            running.delete(n)
          })
        yield* Effect.forkScoped(runWorker(work, handler, { concurrency: 8, pollInterval: "100 millis" }))
        yield* Effect.forkScoped(
          runWorker(work, handler, { concurrency: 8, pollInterval: "100 millis" }).pipe(Effect.provide(secondCopy))
        )
        yield* eventually(Effect.map(jobs.stats, (stats) => stats.length === 0), {
          step: "100 millis",
          what: "all jobs to complete"
        })
        expect(overlaps).toBe(0)
        expect(runsPerJob.size).toBe(240)
        expect([...runsPerJob.values()].every((runs) => runs === 1)).toBe(true)
      }))

    test("stats count queued, scheduled, running and dead jobs per queue", () =>
      Effect.gen(function*() {
        const jobs = yield* JobQueue
        yield* TestClock.setTime(1_000_000)
        yield* jobs.enqueue(email, { to: "running" }, { priority: 5 })
        yield* jobs.enqueue(email, { to: "dead" }, { priority: 4, maxAttempts: 1 })
        yield* jobs.enqueue(email, { to: "queued" })
        yield* jobs.enqueue(email, { to: "scheduled" }, { delay: "1 minute" })
        yield* jobs.enqueue(JobDefinition.make({ queue: "alerts", payload: Email }), { to: "other" })
        const [running] = yield* jobs.claim({ queue: "email", workerId: "w", limit: 1, leaseDuration: Duration.minutes(1) })
        expect(running?.payload).toEqual({ to: "running" })
        const [dying] = yield* jobs.claim({ queue: "email", workerId: "w", limit: 1, leaseDuration: Duration.minutes(1) })
        yield* jobs.fail(dying!, { error: "x", retryAfter: Option.some(Duration.seconds(1)) })
        yield* TestClock.adjust("5 seconds")

        expect(yield* jobs.stats).toEqual([
          { queue: "alerts", queued: 1, scheduled: 0, running: 0, dead: 0, oldestRunnableAgeMs: 5000 },
          { queue: "email", queued: 1, scheduled: 1, running: 1, dead: 1, oldestRunnableAgeMs: 5000 }
        ])
      }))

    test("retryDead moves dead jobs back to the queue with fresh attempts", () =>
      Effect.gen(function*() {
        const jobs = yield* JobQueue
        const once = JobDefinition.make({ queue: "once", payload: Schema.String, maxAttempts: 1 })
        yield* jobs.enqueue(once, "a")
        yield* jobs.enqueue(email, { to: "b" }, { maxAttempts: 1 })
        for (const queue of ["once", "email"]) {
          const [claimed] = yield* claimAll(queue)
          yield* jobs.fail(claimed!, { error: "x", retryAfter: Option.none() })
        }
        expect(yield* jobs.retryDead("once")).toBe(1)
        expect(yield* statsOf("once")).toMatchObject({ queued: 1, dead: 0 })
        expect(yield* statsOf("email")).toMatchObject({ queued: 0, dead: 1 })
        expect(yield* claimAll("once")).toMatchObject([{ payload: "a", attempt: 1, maxAttempts: 1 }])
        expect(yield* jobs.retryDead()).toBe(1)
        expect(yield* jobs.listDead("email", 10)).toEqual([])
      }))

    test("on shutdown an in-flight job finishes within the grace period", () =>
      Effect.gen(function*() {
        const jobs = yield* JobQueue
        const started = yield* Deferred.make<void>()
        const finished = yield* Ref.make(false)
        yield* jobs.enqueue(email, { to: "x" })
        const worker = yield* Effect.fork(runWorker(
          email,
          () =>
            Deferred.succeed(started, undefined).pipe(
              Effect.zipRight(Effect.sleep("3 seconds")),
              Effect.zipRight(Ref.set(finished, true))
            ),
          { shutdownGracePeriod: "10 seconds" }
        ))
        yield* Deferred.await(started)
        const stopping = yield* Effect.fork(Fiber.interrupt(worker))
        yield* eventually(Effect.map(stopping.poll, Option.isSome), { step: "500 millis", what: "the worker to stop" })
        expect(yield* Ref.get(finished)).toBe(true)
        expect(yield* jobs.stats).toEqual([])
      }))

    test("on shutdown a job still running after the grace period is handed back and runs later", () =>
      Effect.gen(function*() {
        const jobs = yield* JobQueue
        const started = yield* Deferred.make<void>()
        const { id } = yield* jobs.enqueue(email, { to: "x" })
        const worker = yield* Effect.fork(runWorker(
          email,
          () => Deferred.succeed(started, undefined).pipe(Effect.zipRight(Effect.never)),
          { shutdownGracePeriod: "5 seconds" }
        ))
        yield* Deferred.await(started)
        const stopping = yield* Effect.fork(Fiber.interrupt(worker))
        yield* eventually(Effect.map(stopping.poll, Option.isSome), { step: "500 millis", what: "the worker to stop" })
        expect(yield* statsOf("email")).toMatchObject({ queued: 1, running: 0, dead: 0 })

        const ran = yield* Ref.make<ReadonlyArray<JobInfo>>([])
        yield* Effect.forkScoped(runWorker(email, (_, job) => Ref.update(ran, (all) => [...all, job])))
        yield* eventually(Effect.map(jobs.stats, (stats) => stats.length === 0), { what: "the job to run again" })
        expect(yield* Ref.get(ran)).toMatchObject([{ id, attempt: 1 }])
      }))

    test("on shutdown jobs claimed ahead but not started go back unstarted, with their attempt not counted", () =>
      Effect.gen(function*() {
        const jobs = yield* JobQueue
        const started = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const ran = yield* Ref.make<ReadonlyArray<string>>([])
        yield* jobs.enqueueMany(email, ["a", "b", "c", "d"].map((to) => ({ payload: { to } })))
        const worker = yield* Effect.fork(runWorker(
          email,
          ({ to }) =>
            Ref.update(ran, (all) => [...all, to]).pipe(
              Effect.zipRight(Deferred.succeed(started, undefined)),
              Effect.zipRight(Deferred.await(release))
            ),
          { concurrency: 1, prefetch: 3 }
        ))
        yield* Deferred.await(started)
        yield* eventually(Effect.map(statsOf("email"), (stats) => stats?.running === 4), { what: "4 claimed jobs" })
        const stopping = yield* Effect.fork(Fiber.interrupt(worker))
        yield* realPause(100)
        yield* Deferred.succeed(release, undefined)
        yield* eventually(Effect.map(stopping.poll, Option.isSome), { what: "the worker to stop" })
        expect(yield* Ref.get(ran)).toEqual(["a"])
        expect(yield* statsOf("email")).toMatchObject({ queued: 3, running: 0, dead: 0 })
        expect((yield* claimAll("email")).map((job) => [job.payload, job.attempt])).toEqual([
          [{ to: "b" }, 1],
          [{ to: "c" }, 1],
          [{ to: "d" }, 1]
        ])
      }))

    test("workerLayer runs jobs while its layer is alive and stops gracefully when it closes", () =>
      Effect.gen(function*() {
        const jobs = yield* JobQueue
        const handled = yield* Ref.make<ReadonlyArray<string>>([])
        const scope = yield* Scope.make()
        yield* Layer.buildWithScope(workerLayer(email, ({ to }) => Ref.update(handled, (all) => [...all, to])), scope)
        yield* jobs.enqueue(email, { to: "while-running" })
        yield* eventually(Effect.map(jobs.stats, (stats) => stats.length === 0), { what: "the job to complete" })
        yield* Scope.close(scope, Exit.void)
        yield* jobs.enqueue(email, { to: "after-close" })
        yield* TestClock.adjust("5 seconds")
        yield* realPause(50)
        expect(yield* Ref.get(handled)).toEqual(["while-running"])
        expect(yield* statsOf("email")).toMatchObject({ queued: 1 })
      }))

    test("schedulesLayer refuses an invalid schedule when it is built", () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(Layer.build(schedulesLayer([
          { name: "broken", cron: "not a cron", timeZone: "UTC", definition: email, payload: { to: "x" } }
        ])))
        expect(error).toMatchObject({ _tag: "InvalidSchedule", name: "broken" })
      }))

    test("a schedule fires once per slot with two schedulers, on local time across a DST change", () =>
      Effect.gen(function*() {
        const { secondCopy } = yield* TestBackend
        const digest = JobDefinition.make({ queue: "digest", payload: Schema.Struct({ kind: Schema.String }) })
        const daily = {
          name: "daily-digest",
          cron: "30 8 * * *",
          timeZone: "Europe/London",
          definition: digest,
          payload: { kind: "daily" }
        }
        yield* TestClock.setTime(Date.parse("2025-03-28T00:00:00Z"))
        const first = yield* Effect.fork(runSchedules([daily]))
        const second = yield* Effect.fork(runSchedules([daily]).pipe(Effect.provide(secondCopy)))
        yield* sleepersAtLeast(2)
        expect(yield* countJobs("digest")).toBe(0)

        // 08:30 in London is 08:30 UTC until Sunday 30 March 2025, then 07:30 UTC (BST)
        const slots = ["2025-03-28T08:30:00Z", "2025-03-29T08:30:00Z", "2025-03-30T07:30:00Z", "2025-03-31T07:30:00Z"]
        for (const [index, slot] of slots.entries()) {
          yield* TestClock.setTime(Date.parse(slot) - 1000)
          yield* sleepersAtLeast(2)
          expect(yield* countJobs("digest")).toBe(index)
          yield* TestClock.setTime(Date.parse(slot))
          yield* sleepersAtLeast(2)
          expect(yield* countJobs("digest")).toBe(index + 1)
        }
        const [job] = yield* claimAll("digest")
        expect(job?.payload).toEqual({ kind: "daily" })

        yield* Fiber.interrupt(first)
        yield* Fiber.interrupt(second)
        // down over three slots (1, 2 and 3 April); a new schedule does not fire a slot from before it existed
        yield* TestClock.setTime(Date.parse("2025-04-03T12:00:00Z"))
        const hourly = { ...daily, name: "hourly-digest", cron: "0 * * * *", payload: { kind: "hourly" } }
        yield* Effect.forkScoped(runSchedules([daily, hourly]))
        yield* sleepersAtLeast(2)
        expect(yield* countJobs("digest")).toBe(5)
        expect(payloadsOf(yield* claimAll("digest"))).toEqual([{ kind: "daily" }])

        yield* TestClock.setTime(Date.parse("2025-04-03T13:00:00Z"))
        yield* sleepersAtLeast(2)
        expect(payloadsOf(yield* claimAll("digest"))).toEqual([{ kind: "hourly" }])
      }))

    test("invalid schedules are refused before anything runs", () =>
      Effect.gen(function*() {
        const base = { name: "s", cron: "0 * * * *", timeZone: "UTC", definition: email, payload: { to: "x" } }
        const badCron = yield* Effect.flip(runSchedules([{ ...base, cron: "61 * * * *" }]))
        expect(badCron).toMatchObject({ _tag: "InvalidSchedule", name: "s", cron: "61 * * * *" })
        const badZone = yield* Effect.flip(runSchedules([{ ...base, timeZone: "Mars/Olympus" }]))
        expect(badZone).toMatchObject({ _tag: "InvalidSchedule", timeZone: "Mars/Olympus" })
        const duplicate = yield* Effect.flip(runSchedules([base, base]))
        expect(duplicate.message).toContain("more than once")
        const counted = JobDefinition.make({ queue: "count", payload: Schema.Struct({ n: Schema.Int }) })
        const badPayload = yield* Effect.flip(runSchedules([{ ...base, definition: counted, payload: { n: 0.5 } }]))
        expect(badPayload.message).toContain("payload does not match")
      }))
  })
}
