import { Cause, Chunk, Duration, Effect, Either, Exit, Fiber, FiberSet, Layer, Option, ParseResult, Queue, Random, Ref, Schedule, Schema, Stream } from "effect"
import { hostname } from "node:os"
import { countOption, linksTo } from "@civicstack/kit"
import type { JobDefinition } from "./definition"
import { retryDelay } from "./definition"
import type { JobQueueError } from "./errors"
import type { ClaimedJob, JobClaim, JobFailure } from "./JobQueue"
import { JobQueue } from "./JobQueue"

export interface WorkerOptions {
  /** Jobs run at the same time by this worker (default 1). */
  readonly concurrency?: number
  /**
   * Jobs claimed ahead and held until a slot frees, so that a finished job is followed at once, without waiting for
   * a round trip to the database (default: as many as `concurrency`). Held jobs are leased to this worker: a higher
   * priority job enqueued meanwhile runs after them, and on shutdown they are handed back unstarted.
   */
  readonly prefetch?: number
  /** How often to look for runnable jobs and expired leases when nothing wakes the worker (default 1 second). */
  readonly pollInterval?: Duration.DurationInput
  /** How long in-flight jobs may run on after the worker is interrupted before they are interrupted and handed back (default 30 seconds). */
  readonly shutdownGracePeriod?: Duration.DurationInput
  /** Recorded on claimed jobs (default: host name, process id and a random suffix). */
  readonly workerId?: string
}

export interface JobInfo {
  readonly id: string
  /** 1 on the first run. */
  readonly attempt: number
  readonly maxAttempts: number
  readonly queue: string
}

/** Completions are deleted in batches of at most this many jobs. */
const COMPLETION_BATCH = 1000

const completionRetry = Schedule.exponential("50 millis").pipe(Schedule.intersect(Schedule.recurs(5)))

const defaultWorkerId = Effect.map(
  Random.nextIntBetween(0, 36 ** 6),
  (suffix) => `${hostname()}/${process.pid}/${suffix.toString(36)}`
)

/**
 * Runs jobs of one definition until interrupted, then shuts down gracefully: stops claiming, lets in-flight
 * jobs finish within the grace period, interrupts and hands back the rest, and flushes pending completions.
 * Fails at start when the queue is unreachable; later database errors are logged and retried.
 */
export const runWorker = <A, I, E, R>(
  definition: JobDefinition<A, I>,
  handler: (payload: A, job: JobInfo) => Effect.Effect<unknown, E, R>,
  options: WorkerOptions = {}
): Effect.Effect<never, JobQueueError, JobQueue | R> =>
  Effect.gen(function*() {
    const jobs = yield* JobQueue
    const queue = definition.queue
    const concurrency = yield* countOption("runWorker", "concurrency", options.concurrency ?? 1, 1)
    const pollInterval = Duration.decode(options.pollInterval ?? "1 second")
    const gracePeriod = Duration.decode(options.shutdownGracePeriod ?? "30 seconds")
    const workerId = options.workerId ?? (yield* defaultWorkerId)
    const decodePayload = Schema.decodeUnknown(definition.payload)

    yield* jobs.recoverExpiredLeases(queue)

    const prefetch = yield* countOption("runWorker", "prefetch", options.prefetch ?? concurrency, 0)
    /** Claimed and not yet settled, whether waiting for a slot or running. */
    const claimedCount = yield* Ref.make(0)
    /** Claims (and their finished jobs' completions) this worker holds, for heartbeats. */
    const held = new Map<string, JobClaim>()
    /** Set by anything that suggests runnable jobs: a poll, a notification, a full claim. */
    const workMayBeAvailable = yield* Ref.make(true)
    const changed = yield* Queue.sliding<void>(1)
    const completions = yield* Queue.unbounded<JobClaim>()
    /** Claimed, waiting for a free slot, in the order claimed (each claim highest priority first). */
    const waiting = yield* Queue.unbounded<ClaimedJob>()
    const slots = yield* Effect.makeSemaphore(concurrency)

    const forget = (claims: ReadonlyArray<JobClaim>) =>
      Effect.sync(() => {
        for (const claim of claims) held.delete(claim.id)
      })

    const completeBatch = (claims: ReadonlyArray<JobClaim>) =>
      jobs.complete(claims).pipe(
        Effect.retry(completionRetry),
        Effect.catchAll((error) =>
          Effect.logError("Could not record completed jobs; they will run again when their leases expire", error)
        ),
        Effect.zipRight(forget(claims))
      )

    const flushCompletions = Effect.flatMap(
      Queue.takeAll(completions),
      (rest) =>
        Effect.forEach(Chunk.chunksOf(rest, COMPLETION_BATCH), (batch) => completeBatch(Chunk.toReadonlyArray(batch)), {
          discard: true
        })
    )

    // Registered first so that it runs last, after every job has settled.
    yield* Effect.addFinalizer(() => flushCompletions)

    const heartbeatInterval = Duration.divide(definition.leaseDuration, 3).pipe(Option.getOrElse(() => definition.leaseDuration))
    yield* Effect.sleep(heartbeatInterval).pipe(
      Effect.zipRight(Effect.suspend(() =>
        held.size === 0 ? Effect.void : jobs.extendLeases([...held.values()], definition.leaseDuration)
      )),
      Effect.catchAll((error) => Effect.logWarning("Could not extend job leases", error)),
      Effect.forever,
      Effect.forkScoped
    )

    const settle = (job: ClaimedJob, exit: Exit.Exit<unknown, unknown>, failure: Effect.Effect<JobFailure>) =>
      Effect.gen(function*() {
        if (Exit.isSuccess(exit)) {
          // completed by the next claim statement, or by the shutdown
          return yield* Queue.offer(completions, job)
        }
        if (Cause.isInterruptedOnly(exit.cause)) {
          yield* jobs.release([job])
        } else {
          const outcome = yield* jobs.fail(job, yield* failure)
          if (outcome === "dead") {
            yield* Effect.logWarning(`Job ${job.id} is dead after ${job.attempt} attempt(s)`, exit.cause)
          }
        }
        yield* forget([job])
      }).pipe(
        Effect.catchAll((error) =>
          Effect.logWarning(`Could not record the outcome of job ${job.id}; it will run again when its lease expires`, error)
        ),
        Effect.ensuring(
          Ref.update(claimedCount, (n) => n - 1).pipe(Effect.zipRight(Queue.offer(changed, undefined)))
        )
      )

    /** Uninterruptible except for the handler itself, so that every claimed job is settled. */
    const runJob = (job: ClaimedJob) =>
      Effect.gen(function*() {
        const payload = yield* Effect.either(decodePayload(job.payload))
        if (Either.isLeft(payload)) {
          const error = `The payload does not match the schema of queue "${queue}": ${
            ParseResult.TreeFormatter.formatErrorSync(payload.left)
          }`
          return yield* settle(job, Exit.fail(error), Effect.succeed({ error, retryAfter: Option.none() }))
        }
        const info: JobInfo = { id: job.id, attempt: job.attempt, maxAttempts: job.maxAttempts, queue }
        const exit = yield* Effect.exit(Effect.interruptible(handler(payload.right, info)).pipe(
          // a trace of its own, linked to the work that enqueued it, as messaging spans are
          Effect.withSpan(`job ${queue}`, {
            root: true,
            kind: "consumer",
            links: linksTo(job.traceParent),
            attributes: { "job.id": job.id, "job.queue": queue, "job.attempt": job.attempt }
          })
        ))
        yield* settle(
          job,
          exit,
          Effect.map(Random.next, (random) => ({
            error: Exit.isFailure(exit) ? Cause.pretty(exit.cause) : "",
            retryAfter: Option.some(retryDelay(definition.backoff, job.attempt, random))
          }))
        )
      }).pipe(Effect.uninterruptible)

    const running = yield* FiberSet.make<void, never>()

    /** While stopping, completions no longer ride on claims; this records them as they come. */
    const completeWhileStopping = Queue.takeBetween(completions, 1, COMPLETION_BATCH).pipe(
      Effect.interruptible,
      Effect.flatMap((batch) => completeBatch(Chunk.toReadonlyArray(batch))),
      Effect.uninterruptible,
      Effect.forever
    )

    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        const completer = yield* Effect.fork(completeWhileStopping)
        const finished = yield* FiberSet.awaitEmpty(running).pipe(Effect.interruptible, Effect.timeoutOption(gracePeriod))
        if (Option.isNone(finished)) {
          yield* Effect.logWarning(
            `Jobs still running after the shutdown grace period (${Duration.format(gracePeriod)}) are interrupted and handed back`
          )
          yield* FiberSet.clear(running)
          yield* FiberSet.awaitEmpty(running)
        }
        yield* Fiber.interrupt(completer)
      })
    )

    /** Runs after the starter below has stopped: jobs that never got a slot go back unstarted. */
    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        const unstarted = Chunk.toReadonlyArray(yield* Queue.takeAll(waiting))
        if (unstarted.length === 0) return
        yield* jobs.release(unstarted).pipe(
          Effect.retry(completionRetry),
          Effect.catchAll((error) =>
            Effect.logWarning("Could not hand back unstarted jobs; they will run when their leases expire", error)
          )
        )
        yield* forget(unstarted)
        yield* Ref.update(claimedCount, (n) => n - unstarted.length)
      })
    )

    /** Starts waiting jobs as slots free; a job taken off `waiting` always starts. */
    yield* Effect.uninterruptibleMask((restore) =>
      restore(slots.take(1)).pipe(
        Effect.zipRight(restore(Queue.take(waiting)).pipe(Effect.onInterrupt(() => slots.release(1)))),
        Effect.flatMap((job) => FiberSet.run(running, runJob(job).pipe(Effect.ensuring(slots.release(1)))))
      )
    ).pipe(Effect.forever, Effect.forkScoped)

    const signalWork = Ref.set(workMayBeAvailable, true).pipe(Effect.zipRight(Queue.offer(changed, undefined)))
    yield* Effect.sleep(pollInterval).pipe(
      Effect.zipRight(jobs.recoverExpiredLeases(queue)),
      Effect.catchAll((error) => Effect.logWarning("Could not recover expired job leases", error)),
      Effect.zipRight(signalWork),
      Effect.forever,
      Effect.forkScoped
    )
    yield* jobs.wakeups(queue).pipe(Stream.runForEach(() => signalWork), Effect.forkScoped)

    /** Uninterruptible: a claim that went through must hand its jobs to the starter, or they would wait for their leases to expire. */
    const completeAndClaim = (limit: number) =>
      Effect.gen(function*() {
        const completed = Chunk.toReadonlyArray(yield* Queue.takeAll(completions))
        const claimed = yield* jobs.claim({ queue, workerId, limit, leaseDuration: definition.leaseDuration, completed })
          .pipe(Effect.tapError(() => Queue.offerAll(completions, completed)))
        yield* forget(completed)
        yield* Ref.update(claimedCount, (n) => n + claimed.length)
        for (const job of claimed) held.set(job.id, job)
        yield* Queue.offerAll(waiting, claimed)
        return claimed.length
      }).pipe(
        Effect.uninterruptible,
        Effect.catchAll((error) =>
          Effect.logWarning("Could not claim jobs; trying again after the poll interval", error).pipe(
            Effect.zipRight(Effect.sleep(pollInterval)),
            Effect.as(0)
          )
        )
      )

    // Claims run while jobs run, so the round trip of one claim overlaps the work of the previous ones.
    const capacity = concurrency + prefetch
    while (true) {
      const room = capacity - (yield* Ref.get(claimedCount))
      const pendingCompletions = yield* Queue.size(completions)
      if (room > 0 && ((yield* Ref.getAndSet(workMayBeAvailable, false)) || pendingCompletions > 0)) {
        const claimed = yield* completeAndClaim(room)
        if (claimed === room) yield* Ref.set(workMayBeAvailable, true)
      } else {
        yield* Queue.take(changed)
        // lets other jobs that are about to finish do so, so that the next statement carries more
        yield* Effect.yieldNow()
      }
    }
  }).pipe(
    Effect.scoped,
    Effect.annotateLogs({ queue: definition.queue })
  )

/** Runs `runWorker` in the layer's scope; closing the scope shuts the worker down gracefully. */
export const workerLayer = <A, I, E, R>(
  definition: JobDefinition<A, I>,
  handler: (payload: A, job: JobInfo) => Effect.Effect<unknown, E, R>,
  options?: WorkerOptions
): Layer.Layer<never, never, JobQueue | R> =>
  Layer.scopedDiscard(
    runWorker(definition, handler, options).pipe(
      Effect.catchAllCause((cause) => Effect.logError(`Worker for queue "${definition.queue}" stopped`, cause)),
      Effect.forkScoped
    )
  )
