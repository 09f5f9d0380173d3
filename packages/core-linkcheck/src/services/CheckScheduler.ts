import { Clock, Duration, Effect, Exit, FiberSet, Option, Schedule } from "effect"
import type { ClaimedCheck } from "../domain/check"
import { checkFailedOutcome } from "../domain/outcome"
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


const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))

/**
 * Claims pending checks from the store and runs them: at most `concurrency` at once and `perHostConcurrency` per
 * host, high priority first without starving low. Claims are extended while checks run, so only a dead worker's
 * checks are taken over. On interruption it stops claiming, lets running checks finish within the grace period and
 * hands the rest back.
 */
export const runScheduler = (options: Partial<SchedulerOptions> = {}) =>
  Effect.gen(function*() {
    const settings = { ...defaultSchedulerOptions, ...options }
    const store = yield* LinkcheckStore
    const checker = yield* Checker
    const wakeUp = yield* CheckSignal
    const running = new Map<string, ClaimedCheck>()
    const inFlightByHost = new Map<string, number>()
    const nextStartByHost = new Map<string, number>()
    let lowPriorityCredit = 0

    const claimDeadline = Effect.map(now, (at) => new Date(at.getTime() + Duration.toMillis(CLAIM_DURATION)))

    const waitForHostTurn = (host: string) =>
      Effect.gen(function*() {
        const at = yield* Clock.currentTimeMillis
        const start = Math.max(at, nextStartByHost.get(host) ?? 0)
        nextStartByHost.set(host, start + Duration.toMillis(settings.perHostInterval))
        if (start > at) yield* Effect.sleep(Duration.millis(start - at))
      })

    const finish = (check: ClaimedCheck) =>
      Effect.sync(() => {
        running.delete(check.id)
        const left = (inFlightByHost.get(check.host) ?? 1) - 1
        if (left === 0) inFlightByHost.delete(check.host)
        else inFlightByHost.set(check.host, left)
      }).pipe(Effect.zipRight(wakeUp.notify))

    const runCheck = (check: ClaimedCheck) =>
      Effect.gen(function*() {
        const result = check.attempts > settings.maxAttempts
          ? checkFailedOutcome
          : yield* waitForHostTurn(check.host).pipe(Effect.zipRight(checker.check(check.uri, { background: true })))
        const completedAt = yield* now
        yield* store.transaction(
          store.completeCheck({ id: check.id, workerId: settings.workerId, result, now: completedAt }).pipe(
            Effect.flatMap(Option.match({
              onNone: () => Effect.void,
              onSome: ({ completedBatches }) => enqueueWebhooks(completedBatches)
            }))
          )
        )
      }).pipe(
        Effect.onExit((exit) =>
          Exit.isInterrupted(exit)
            ? store.releaseClaims(settings.workerId, [check.id]).pipe(Effect.ignoreLogged)
            : Effect.void
        ),
        Effect.tapErrorCause((cause) =>
          Effect.logWarning("Link check could not be recorded; it will be retried when its claim expires", cause)
        ),
        Effect.ensuring(finish(check)),
        Effect.ignore
      )

    const claimMore = Effect.gen(function*() {
      const free = settings.concurrency - running.size
      if (free <= 0) return []
      lowPriorityCredit += free * LOW_PRIORITY_SHARE
      const lowPriorityQuota = Math.floor(lowPriorityCredit)
      const claimed = yield* store.claimChecks({
        workerId: settings.workerId,
        now: yield* now,
        claimUntil: yield* claimDeadline,
        limit: free,
        perHost: settings.perHostConcurrency,
        inFlightByHost,
        lowPriorityQuota
      })
      const lowClaimed = claimed.filter((check) => check.priority === "low").length
      lowPriorityCredit = Math.max(0, lowPriorityCredit - Math.min(lowClaimed, lowPriorityQuota))
      for (const check of claimed) {
        running.set(check.id, check)
        inFlightByHost.set(check.host, (inFlightByHost.get(check.host) ?? 0) + 1)
      }
      return claimed
    })

    const checks = yield* FiberSet.make<void, never>()

    const extendClaims = Effect.gen(function*() {
      if (running.size === 0) return
      yield* store.extendClaims(settings.workerId, [...running.keys()], yield* claimDeadline)
    }).pipe(Effect.ignoreLogged, Effect.repeat(Schedule.spaced(Duration.times(CLAIM_DURATION, 1 / 3))))

    const claimLoop = Effect.gen(function*() {
      const claimed = yield* claimMore.pipe(
        Effect.tapErrorCause((cause) => Effect.logWarning("Claiming link checks failed", cause)),
        Effect.orElseSucceed((): ReadonlyArray<ClaimedCheck> => [])
      )
      for (const check of claimed) yield* FiberSet.run(checks, runCheck(check))
      if (claimed.length === 0 || running.size >= settings.concurrency) yield* wakeUp.wait(settings.pollInterval)
    }).pipe(Effect.forever)

    const drain = Effect.gen(function*() {
      if (running.size === 0) return
      yield* Effect.logInfo("Link checks finishing before shutdown").pipe(Effect.annotateLogs({ running: running.size }))
      const allDone = yield* FiberSet.join(checks).pipe(Effect.timeoutOption(settings.shutdownGracePeriod))
      if (Option.isNone(allDone)) yield* FiberSet.clear(checks)
    })

    return yield* Effect.raceFirst(claimLoop, extendClaims).pipe(Effect.ensuring(drain))
  }).pipe(Effect.scoped)
