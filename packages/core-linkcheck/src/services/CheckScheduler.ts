import { Clock, Duration, Effect, Exit, FiberSet, Option, Queue, Schedule } from "effect"
import type { ClaimedCheck } from "../domain/check"
import { checkFailedOutcome } from "../domain/outcome"
import type { CheckCompletion } from "../storage/LinkcheckStore"
import { LinkcheckStore } from "../storage/LinkcheckStore"
import { Checker } from "./Checker"
import { CheckSignal } from "./CheckSignal"
import { CLAIM_DURATION, enqueueWebhooks } from "./LinkChecker"

export interface SchedulerOptions {
  /** Checks in flight at once in this process. */
  readonly concurrency: number
  /** Checks in flight at once per host in this process. */
  readonly perHostConcurrency: number
  /** The least time between the starts of two checks of one host. */
  readonly perHostInterval: Duration.DurationInput
  /** How often to look for work when nothing signalled it. */
  readonly pollInterval: Duration.DurationInput
  /** How long in-flight checks may run after shutdown begins before they are handed back. */
  readonly shutdownGracePeriod: Duration.DurationInput
  /** Starts of one check after which it is given up with a "could not complete" warning. */
  readonly maxAttempts: number
  readonly workerId: string
}

export const defaultSchedulerOptions: SchedulerOptions = {
  concurrency: 128,
  perHostConcurrency: 4,
  perHostInterval: Duration.millis(10),
  pollInterval: Duration.seconds(1),
  shutdownGracePeriod: Duration.seconds(30),
  maxAttempts: 3,
  workerId: `linkcheck-${crypto.randomUUID()}`
}

/** Out of every 21 claimed slots one goes to low priority first (the public system weights them 20 to 1). */
const LOW_PRIORITY_SHARE = 1 / 21

/** After a claim that found less work than it had room for, the least time before the next one. */
const SHORT_CLAIM_PAUSE = Duration.millis(20)

/** Results recorded in one transaction at most; more wait for the next. */
const MAX_RESULTS_PER_WRITE = 256

const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))

/**
 * The writer wakes as soon as one result is offered; a few milliseconds of real time let the responses that have
 * already arrived be processed first, so one write records many results. It does not read the clock, so it also
 * passes under a TestClock.
 */
const letOtherResultsArrive = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))

/**
 * Claims pending checks from the store and runs them: at most `concurrency` at once and `perHostConcurrency` per
 * host, high priority first without starving low. Results are recorded in batches, as many as finished while the
 * previous write ran. Claims are extended while checks run, so only a dead worker's checks are taken over. On
 * interruption it stops claiming, lets running checks finish within the grace period, records their results and
 * hands the rest back.
 */
export const runScheduler = (options: Partial<SchedulerOptions> = {}) =>
  Effect.gen(function*() {
    const settings = { ...defaultSchedulerOptions, ...options }
    const store = yield* LinkcheckStore
    const checker = yield* Checker
    const signal = yield* CheckSignal
    /** Claimed and being checked: these count against the concurrency limits. */
    const checking = new Map<string, ClaimedCheck>()
    const checkingByHost = new Map<string, number>()
    /** Checked, result not recorded yet: still claimed by this worker. */
    const unrecorded = new Set<string>()
    const results = yield* Queue.unbounded<CheckCompletion>()
    const nextStartByHost = new Map<string, number>()
    let lowPriorityCredit = 0

    const claimDeadline = Effect.map(now, (at) => new Date(at.getTime() + Duration.toMillis(CLAIM_DURATION)))

    const waitForHostTurn = (host: string) =>
      Effect.gen(function*() {
        const interval = Duration.toMillis(settings.perHostInterval)
        if (interval === 0) return
        const at = yield* Clock.currentTimeMillis
        const start = Math.max(at, nextStartByHost.get(host) ?? 0)
        nextStartByHost.set(host, start + interval)
        if (start > at) yield* Effect.sleep(Duration.millis(start - at))
      })

    const stopChecking = (check: ClaimedCheck) =>
      Effect.sync(() => {
        checking.delete(check.id)
        const left = (checkingByHost.get(check.host) ?? 1) - 1
        if (left === 0) checkingByHost.delete(check.host)
        else checkingByHost.set(check.host, left)
      }).pipe(Effect.zipRight(signal.notify))

    const runCheck = (check: ClaimedCheck) =>
      Effect.gen(function*() {
        const result = check.attempts > settings.maxAttempts
          ? checkFailedOutcome
          : yield* waitForHostTurn(check.host).pipe(Effect.zipRight(checker.check(check.uri, { background: true })))
        unrecorded.add(check.id)
        yield* Queue.offer(results, { id: check.id, result })
      }).pipe(
        Effect.onExit((exit) =>
          Exit.isInterrupted(exit)
            ? store.releaseClaims(settings.workerId, [check.id]).pipe(Effect.ignoreLogged)
            : Effect.void
        ),
        Effect.ensuring(stopChecking(check))
      )

    /** Uninterruptible: results taken off the queue are recorded even when shutdown begins meanwhile. */
    const record = (batch: ReadonlyArray<CheckCompletion>) =>
      Effect.gen(function*() {
        const completed = yield* store.transaction(
          Effect.gen(function*() {
            const completed = yield* store.completeChecks({ workerId: settings.workerId, now: yield* now, results: batch })
            yield* enqueueWebhooks(completed.completedBatches)
            return completed
          })
        )
        if (completed.recorded.length < batch.length) {
          yield* Effect.logWarning("Some link check results came after their claims expired and were dropped").pipe(
            Effect.annotateLogs({ dropped: batch.length - completed.recorded.length })
          )
        }
      }).pipe(
        Effect.tapErrorCause((cause) =>
          Effect.logWarning("Link check results could not be recorded; the checks run again when their claims expire", cause)
        ),
        Effect.ignore,
        Effect.ensuring(Effect.sync(() => batch.forEach(({ id }) => unrecorded.delete(id)))),
        Effect.uninterruptible
      )

    const recordLoop = Queue.take(results).pipe(
      Effect.zipLeft(letOtherResultsArrive),
      Effect.flatMap((first) =>
        Effect.map(Queue.takeUpTo(results, MAX_RESULTS_PER_WRITE - 1), (more) => [first, ...more])
      ),
      Effect.flatMap(record),
      Effect.forever
    )

    const claimMore = Effect.gen(function*() {
      const free = settings.concurrency - checking.size
      if (free <= 0) return []
      lowPriorityCredit += free * LOW_PRIORITY_SHARE
      const lowPriorityQuota = Math.floor(lowPriorityCredit)
      const claimed = yield* store.claimChecks({
        workerId: settings.workerId,
        now: yield* now,
        claimUntil: yield* claimDeadline,
        limit: free,
        perHost: settings.perHostConcurrency,
        inFlightByHost: checkingByHost,
        lowPriorityQuota
      })
      const lowClaimed = claimed.filter((check) => check.priority === "low").length
      lowPriorityCredit = Math.max(0, lowPriorityCredit - Math.min(lowClaimed, lowPriorityQuota))
      for (const check of claimed) {
        checking.set(check.id, check)
        checkingByHost.set(check.host, (checkingByHost.get(check.host) ?? 0) + 1)
      }
      return claimed
    })

    const checks = yield* FiberSet.make<void, never>()

    const extendClaims = Effect.gen(function*() {
      const held = [...checking.keys(), ...unrecorded]
      if (held.length === 0) return
      yield* store.extendClaims(settings.workerId, held, yield* claimDeadline)
    }).pipe(Effect.ignoreLogged, Effect.repeat(Schedule.spaced(Duration.times(CLAIM_DURATION, 1 / 3))))

    /**
     * A claim is one query however many checks it takes, so the loop claims in groups: it waits until a good share
     * of the slots is free, and after a claim that found less work than it had room for (the rest waits on busy
     * hosts, or there is none) it lets a moment pass before asking again.
     */
    const claimGroup = Math.max(1, Math.floor(settings.concurrency / 8))
    const claimLoop = Effect.gen(function*() {
      const room = settings.concurrency - checking.size
      if (checking.size > 0 && room < claimGroup) return yield* signal.wait(settings.pollInterval)
      const claimed = yield* claimMore.pipe(
        Effect.tapErrorCause((cause) => Effect.logWarning("Claiming link checks failed", cause)),
        Effect.orElseSucceed((): ReadonlyArray<ClaimedCheck> => [])
      )
      for (const check of claimed) yield* FiberSet.run(checks, runCheck(check))
      if (claimed.length < room) {
        yield* Effect.sleep(SHORT_CLAIM_PAUSE)
        yield* signal.wait(settings.pollInterval)
      }
    }).pipe(Effect.forever)

    const recordRemaining = Effect.gen(function*() {
      const remaining = yield* Queue.takeAll(results)
      if (remaining.length > 0) yield* record([...remaining])
    })

    const drain = Effect.gen(function*() {
      if (checking.size > 0) {
        yield* Effect.logInfo("Link checks finishing before shutdown").pipe(Effect.annotateLogs({ running: checking.size }))
        const allDone = yield* FiberSet.awaitEmpty(checks).pipe(Effect.timeoutOption(settings.shutdownGracePeriod))
        if (Option.isNone(allDone)) yield* FiberSet.clear(checks)
      }
      yield* recordRemaining
    })

    return yield* Effect.raceAll([claimLoop, extendClaims, recordLoop]).pipe(Effect.ensuring(drain))
  }).pipe(Effect.scoped)
