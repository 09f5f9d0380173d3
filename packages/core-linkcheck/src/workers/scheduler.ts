import { countOption, now } from "@civicstack/kit"
import { Cause, Duration, Effect, Option, Queue, Schedule } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import type { ClaimedCheck } from "../domain/check"
import { checkFailedOutcome } from "../domain/outcome"
import { CLAIM_DURATION, CLAIM_RENEWAL } from "../domain/check"
import { makeAlarms } from "../services/inspector/alarms"
import { LinkcheckParts } from "../services/LinkcheckParts"
import type { Inspection } from "../services/LinkInspector"
import type { Claimer } from "../services/LocalClaims"
import type { SchedulerOptions } from "../settings"
import type { CheckCompletion, ClaimRequest } from "../storage/LinkcheckStore"

const defaultSchedulerOptions: SchedulerOptions = {
  concurrency: 128,
  perHostConcurrency: 4,
  perHostInterval: Duration.millis(10),
  pollInterval: Duration.seconds(1),
  shutdownGracePeriod: Duration.seconds(30),
  maxAttempts: 3
}

/** Out of every 21 claimed slots one goes to low priority first (the public system weights them 20 to 1). */
const LOW_PRIORITY_SHARE = 1 / 21

/** After a claim that found less work than it had room for, the least time before the next one. */
const SHORT_CLAIM_PAUSE = Duration.millis(20)

/** Past this many hosts, those whose interval has passed are forgotten, so a long-lived worker does not grow. */
const MAX_REMEMBERED_HOSTS = 10_000

/** Results recorded in one transaction at most; more wait for the next. */
const MAX_RESULTS_PER_WRITE = 256

/** The schedulers running in this process: another with this process's pid is an earlier life of it. */
const schedulersInThisProcess = new Set<string>()

/**
 * Where this process's pid means something: the host name and, on Linux, the pid namespace, so that containers
 * sharing a host name (host networking) never judge each other's pids.
 */
export const processSpace = () => {
  try {
    return `${Os.hostname()} ${Fs.readlinkSync("/proc/self/ns/pid")}`
  } catch {
    return Os.hostname()
  }
}

/** Whether a process with this pid runs on this host (one we may not signal runs too). */
const isRunning = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/**
 * Each write of results costs the store a transaction, so the writer, woken by a first result, lets more arrive
 * while checks are still running: up to `RESULTS_GATHERING_STEPS` steps of a few milliseconds of real time, ending
 * early once a write's worth has come or nothing is left running. It does not read the clock, so it also passes
 * under a TestClock.
 */
const RESULTS_GATHERING_STEP_MS = 5
const RESULTS_GATHERING_STEPS = 6
const RESULTS_WORTH_A_WRITE = 64
const gatheringStep = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, RESULTS_GATHERING_STEP_MS)))

/** Claims, its own and those of writes of the request side, that one worker makes at once at most. */
const CLAIMS_AT_ONCE = 64

const STARTS_PER_TURN = 16
const nextTurn = Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))

/** High priority first, then in the order the checks were created. */
const runsBefore = (a: ClaimedCheck, b: ClaimedCheck) =>
  a.priority === b.priority ? Number(a.id) < Number(b.id) : a.priority === "high"

const addTo = (counts: Map<string, number>, host: string, delta: number) => {
  const count = (counts.get(host) ?? 0) + delta
  if (count === 0) counts.delete(host)
  else counts.set(host, count)
}

/**
 * Claims pending checks from the store and runs them: at most `concurrency` at once in this process and
 * `perHostConcurrency` per site (`siteOf`) across every process sharing the store, high priority first without
 * starving low. The checks that run inside requests of this process take their slots from the same limits, first.
 * A few more are claimed ahead and held, so a slot that frees is filled at once. Results are recorded in groups.
 * A heartbeat renews the claims of the checks it works on, so only a dead worker's checks are taken over, and
 * hands back at once those of workers of this host whose process is gone. On interruption it stops
 * claiming, hands back the checks it has not started, lets running checks finish within the grace period, records
 * their results and hands the rest back.
 */
export const runScheduler = (options: Partial<SchedulerOptions> = {}) =>
  Effect.gen(function*() {
    const given = { ...defaultSchedulerOptions, ...options }
    const settings = {
      ...given,
      concurrency: yield* countOption("runScheduler", "concurrency", given.concurrency, 1),
      perHostConcurrency: yield* countOption("runScheduler", "perHostConcurrency", given.perHostConcurrency, 1),
      maxAttempts: yield* countOption("runScheduler", "maxAttempts", given.maxAttempts, 1)
    }
    const prefetch = yield* countOption("runScheduler", "prefetch", given.prefetch ?? settings.concurrency / 2, 0)
    const { completion, inspector, localClaims, signal, slots, store } = yield* LinkcheckParts
    const workerId = `linkcheck-${crypto.randomUUID()}`
    /** The store's `hostname` of this worker: host name and pid namespace. */
    const hostname = processSpace()
    /** Claimed and being checked: these count against the concurrency limits. */
    const running = new Map<string, ClaimedCheck>()
    const runningByHost = new Map<string, number>()
    /** Claimed ahead and not started yet, per host, in the order they should run. */
    const ready = new Map<string, Array<ClaimedCheck>>()
    let readyCount = 0
    const results = yield* Queue.unbounded<CheckCompletion>()
    /** Checked, result not written yet (queued or being written): still this worker's claims. */
    const unrecorded = new Set<string>()
    const nextStartByHost = new Map<string, number>()
    let lowPriorityCredit = 0
    let stopping = false
    /**
     * Claims run beside each other (see `claimer`), and a heartbeat, or the start of shutdown, beside none. One that
     * waits to run alone holds the turnstile, so that claims arriving meanwhile wait behind it rather than starve it.
     */
    const claiming = yield* Effect.makeSemaphore(CLAIMS_AT_ONCE)
    const turnstile = yield* Effect.makeSemaphore(1)
    const asClaim = <A, E>(effect: Effect.Effect<A, E>) =>
      Effect.acquireUseRelease(turnstile.withPermits(1)(claiming.take(1)), () => effect, () => claiming.release(1))
    const alone = <A, E>(effect: Effect.Effect<A, E>) =>
      turnstile.withPermits(1)(claiming.withPermits(CLAIMS_AT_ONCE)(effect))

    const claimMillis = Duration.toMillis(CLAIM_DURATION)

    const hostIntervalMillis = Duration.toMillis(settings.perHostInterval)
    /** Takes this host's next turn: how long from `at` until it comes, 0 in the common case. */
    const waitForHostTurn = (host: string, at: number): number => {
      if (hostIntervalMillis === 0) return 0
      if (nextStartByHost.size > MAX_REMEMBERED_HOSTS) {
        for (const [known, next] of nextStartByHost) if (next <= at) nextStartByHost.delete(known)
      }
      const start = Math.max(at, nextStartByHost.get(host) ?? 0)
      nextStartByHost.set(host, start + hostIntervalMillis)
      return start - at
    }

    const readyIds = () => [...ready.values()].flat().map((check) => check.id)

    /** Running or ready, per host: what this worker holds against the hosts' limits. */
    const heldByHost = () => {
      const held = new Map(runningByHost)
      for (const [host, queue] of ready) held.set(host, (held.get(host) ?? 0) + queue.length)
      return held
    }

    /**
     * Moves the checks that may start now from `ready` to `running`, best first: within this scheduler's limits and
     * with a slot of the process's, which checks inside requests share.
     */
    const takeStartable = (): ReadonlyArray<ClaimedCheck> => {
      const startable: Array<ClaimedCheck> = []
      while (running.size < settings.concurrency && readyCount > 0) {
        let best: ClaimedCheck | undefined
        for (const [host, queue] of ready) {
          if ((runningByHost.get(host) ?? 0) >= settings.perHostConcurrency || !slots.canTake(host)) continue
          if (best === undefined || runsBefore(queue[0]!, best)) best = queue[0]!
        }
        if (best === undefined) break
        const queue = ready.get(best.host)!
        queue.shift()
        if (queue.length === 0) ready.delete(best.host)
        readyCount -= 1
        running.set(best.id, best)
        addTo(runningByHost, best.host, 1)
        slots.take(best.host)
        startable.push(best)
      }
      return startable
    }

    const clock = yield* Effect.clock
    const alarms = yield* makeAlarms
    /** How to drop each running check: its inspection, or its wait for its host's turn. */
    const cancels = new Map<string, () => void>()
    /** Called when the last running check stops, while shutdown waits for them. */
    let whenNoneRuns: (() => void) | undefined

    /** From start to result a check is callbacks, not a fiber: a batch runs thousands at once. */
    const startCheck = (check: ClaimedCheck): void => {
      if (check.attempts > settings.maxAttempts) return checked(check, { result: checkFailedOutcome, anchors: null })
      const inspect = () => {
        let done = false
        const cancel = inspector.start(check.uri, { background: true, readsAnchors: check.readsAnchors }, (inspection) => {
          done = true
          cancels.delete(check.id)
          checked(check, inspection)
        })
        if (!done) cancels.set(check.id, cancel)
      }
      const at = clock.unsafeCurrentTimeMillis()
      const wait = waitForHostTurn(check.host, at)
      if (wait === 0) return inspect()
      cancels.set(check.id, alarms.set(at + wait, inspect))
    }

    const checked = (check: ClaimedCheck, { anchors, result }: Inspection) => {
      unrecorded.add(check.id)
      Queue.unsafeOffer(results, { id: check.id, result, anchors })
      stopChecking(check)
    }

    /**
     * Starts what may start now. A check can end inside its own start (a `mailto:` link needs no request), and with it
     * start the next: such starts join the loop already running instead of going deeper, one per check.
     */
    let startingChecks = false
    const startStartable = () => {
      if (startingChecks) return
      startingChecks = true
      try {
        for (let startable = takeStartable(); startable.length > 0; startable = takeStartable()) {
          startable.forEach(startCheck)
        }
      } finally {
        startingChecks = false
      }
    }

    const stopChecking = (check: ClaimedCheck) => {
      running.delete(check.id)
      addTo(runningByHost, check.host, -1)
      slots.release(check.host)
      if (stopping) {
        if (running.size === 0) whenNoneRuns?.()
        return
      }
      startStartable()
      // waking the claim loop for less than a group would only send it back to sleep
      if (claimWanted() && !nothingWaits) signal.unsafeNotify()
    }

    /**
     * Starts the checks that may start now. Many at once (after a claim) are started a group at a time with a turn
     * of the event loop between groups, so that the first group's connections open and their requests leave while the
     * rest are prepared. Uninterruptible: every check taken is started, and so handed back if interrupted.
     */
    const startReady: Effect.Effect<void> = Effect.suspend(() => {
      if (stopping) return Effect.void
      const startable = takeStartable()
      return Effect.gen(function*() {
        for (let index = 0; index < startable.length; index += STARTS_PER_TURN) {
          if (index > 0) yield* nextTurn
          startable.slice(index, index + STARTS_PER_TURN).forEach(startCheck)
        }
      })
    }).pipe(Effect.uninterruptible)

    const capacity = settings.concurrency + prefetch
    /**
     * A claim is one query however many checks it takes, so the loop claims in groups: it waits until a good share
     * of the room is free, or until a slot is free with nothing ready to fill it, and after a claim that found less
     * work than it had room for (the rest waits on busy hosts, or there is none) it lets a moment pass.
     */
    const claimGroup = Math.max(1, Math.floor(settings.concurrency / 4))
    const claimWanted = () =>
      capacity - running.size - readyCount >= claimGroup || (running.size < settings.concurrency && readyCount === 0)
    /**
     * The last claim found nothing, and no check waits unclaimed (the rest of a batch is running). A slot that frees
     * then does not wake the claim loop, which waits for new work to be signalled or for its poll, rather than
     * claiming again after every check of the batch's tail.
     */
    let nothingWaits = false
    const noCheckWaits = Effect.flatMap(now, (at) => store.workload(at)).pipe(
      Effect.map((figures) => figures.pending <= figures.claimed),
      Effect.orElseSucceed(() => false)
    )

    /** Results taken off the queue and not written yet; their claims stay this worker's until they are. */
    const unwritten: Array<CheckCompletion> = []

    /** One write of every unwritten result, whole or not at all. */
    const writeUnwritten = Effect.gen(function*() {
      const batch = unwritten.slice(0, MAX_RESULTS_PER_WRITE)
      const completed = yield* completion.recordResults({ workerId, now: yield* now, results: batch })
      unwritten.splice(0, batch.length)
      batch.forEach(({ id }) => unrecorded.delete(id))
      if (completed.recorded.length < batch.length) {
        yield* Effect.logWarning("Some link check results came after another worker took their checks over").pipe(
          Effect.annotateLogs({ dropped: batch.length - completed.recorded.length })
        )
      }
    }).pipe(Effect.uninterruptible)

    /**
     * Writes until nothing is left unwritten. A write that fails (the database may be unreachable) is tried again
     * every second at most, so results reach the database soon after it comes back; the pause between tries can be
     * interrupted, a write itself cannot.
     */
    const writeAll = Effect.gen(function*() {
      let failures = 0
      while (unwritten.length > 0) {
        const written = yield* Effect.either(writeUnwritten)
        if (written._tag === "Right") {
          if (failures > 0) yield* Effect.logInfo("Link check results recorded again").pipe(Effect.annotateLogs({ failures }))
          failures = 0
          continue
        }
        if (failures === 0) {
          yield* Effect.logWarning("Link check results could not be recorded; trying again", Cause.fail(written.left))
        }
        failures += 1
        yield* Effect.sleep(Duration.millis(Math.min(1000, 50 * 2 ** failures)))
      }
    })

    const letOtherResultsArrive = Effect.gen(function*() {
      for (let step = 0; step < RESULTS_GATHERING_STEPS; step++) {
        yield* gatheringStep
        if (running.size === 0 || (yield* Queue.size(results)) + 1 >= RESULTS_WORTH_A_WRITE) return
      }
    })

    /** A result taken off the queue is in `unwritten` at once, so shutdown writes it even if it comes meanwhile. */
    const recordLoop = Effect.uninterruptibleMask((restore) =>
      Effect.gen(function*() {
        unwritten.push(yield* restore(Queue.take(results)))
        yield* restore(letOtherResultsArrive)
        unwritten.push(...(yield* Queue.takeUpTo(results, MAX_RESULTS_PER_WRITE - unwritten.length)))
        yield* restore(writeAll)
      })
    ).pipe(Effect.forever)

    const claimRequest = (at: Date, room: number, lowPriorityQuota: number): ClaimRequest => ({
      workerId,
      now: at,
      claimUntil: new Date(at.getTime() + claimMillis),
      limit: room,
      perHost: settings.perHostConcurrency,
      aheadPerHost: Math.min(prefetch, settings.perHostConcurrency),
      workersAliveSince: new Date(at.getTime() - claimMillis),
      heldByHost: heldByHost(),
      lowPriorityQuota
    })

    /** Puts claimed checks among the ready ones, each host's in the order they should run. */
    const takeClaimed = (claimed: ReadonlyArray<ClaimedCheck>) => {
      const joined = new Set<Array<ClaimedCheck>>()
      for (const check of claimed) {
        const queue = ready.get(check.host)
        if (queue === undefined) ready.set(check.host, [check])
        else {
          queue.push(check)
          joined.add(queue)
        }
        readyCount += 1
      }
      // a claim's checks come in order; only a host that already had some waits to be put in order again
      for (const queue of joined) queue.sort((a, b) => (runsBefore(a, b) ? -1 : 1))
    }

    /** Uninterruptible: claimed checks are either ready to start or, once shutdown began, handed back by `drain`. */
    const claimMore = Effect.gen(function*() {
      const room = capacity - running.size - readyCount - roomBeingClaimed
      if (room <= 0) return 0
      lowPriorityCredit += room * LOW_PRIORITY_SHARE
      const lowPriorityQuota = Math.floor(lowPriorityCredit)
      const claimed = yield* store.claimChecks(claimRequest(yield* now, room, lowPriorityQuota))
      const lowClaimed = claimed.filter((check) => check.priority === "low").length
      lowPriorityCredit = Math.max(0, lowPriorityCredit - Math.min(lowClaimed, lowPriorityQuota))
      takeClaimed(claimed)
      yield* startReady
      return claimed.length
    }).pipe(asClaim, Effect.uninterruptible)

    /** Room promised to the claims of writes in progress, so that two at once do not both fill it. */
    let roomBeingClaimed = 0

    /**
     * The request side of this process writes new checks claimed for this worker, as a claim would (see
     * `claimMore`), and the claim loop starts them while the writer goes on. Such writes run beside each other and
     * beside a claim, but never beside a heartbeat, which would hand back the checks it does not know of yet, nor
     * once shutdown began.
     */
    const claimer: Claimer = {
      claimWhile: (wanted, write) =>
        Effect.suspend(() => {
          const room = Math.min(wanted, capacity - running.size - readyCount - roomBeingClaimed)
          if (stopping || room <= 0) return write(undefined)
          roomBeingClaimed += room
          return Effect.flatMap(now, (at) => write(claimRequest(at, room, 0))).pipe(
            Effect.tap((written) =>
              Effect.sync(() => {
                takeClaimed(written.claimed)
                if (written.claimed.length > 0) signal.unsafeNotify()
              })
            ),
            Effect.ensuring(Effect.sync(() => {
              roomBeingClaimed -= room
            }))
          )
        }).pipe(asClaim, Effect.uninterruptible)
    }

    /**
     * Tells the other workers this one is alive and renews the claims of the checks it is working on; a claim in
     * its name that it does not know of (the answer to a claim was lost to a failing connection) is handed back.
     * Never at the same time as a claim, whose checks it would not know of yet.
     */
    const heartbeat = alone(Effect.gen(function*() {
      const at = yield* now
      yield* store.heartbeat({
        workerId,
        hostname,
        pid: process.pid,
        now: at,
        holding: [...running.keys(), ...readyIds(), ...unrecorded],
        claimUntil: new Date(at.getTime() + claimMillis)
      })
    }))

    const heartbeats = heartbeat.pipe(
      Effect.tapErrorCause((cause) => Effect.logWarning("Link check heartbeat failed", cause)),
      Effect.ignore,
      Effect.zipRight(Effect.suspend(() => retireGoneWorkersOfThisHost)),
      Effect.repeat(Schedule.spaced(CLAIM_RENEWAL))
    )

    /**
     * A worker of this host whose process is gone (a pid that no longer runs here, or this process's own pid, as in a
     * container restarted in place) cannot finish its checks: they are handed back now rather than when their claims
     * end. Run at start and with every heartbeat.
     */
    const retireGoneWorkersOfThisHost = Effect.gen(function*() {
      const gone = (yield* store.workersOn(hostname)).filter((worker) =>
        !schedulersInThisProcess.has(worker.id) && (worker.pid === process.pid || !isRunning(worker.pid))
      )
      if (gone.length === 0) return
      yield* store.retireWorkers(gone.map((worker) => worker.id))
      yield* Effect.logInfo("Handed back the link checks of a process of this host that is gone").pipe(
        Effect.annotateLogs({ workers: gone.length })
      )
    }).pipe(Effect.ignoreLogged)

    const claimLoop = Effect.gen(function*() {
      // woken maybe by a check inside a request that gave back a slot some ready check was waiting for
      yield* startReady
      const room = capacity - running.size - readyCount
      if (!claimWanted()) return yield* signal.wait(settings.pollInterval)
      const claimed = yield* claimMore.pipe(
        Effect.tapErrorCause((cause) => Effect.logWarning("Claiming link checks failed", cause)),
        Effect.orElseSucceed(() => 0)
      )
      nothingWaits = claimed === 0 && (yield* noCheckWaits)
      if (claimed < room) {
        yield* Effect.sleep(SHORT_CLAIM_PAUSE)
        yield* signal.wait(settings.pollInterval)
      }
    }).pipe(Effect.forever)

    /** At shutdown: every result not written yet, tried for the grace period. */
    const recordRemaining = Effect.gen(function*() {
      unwritten.push(...(yield* Queue.takeAll(results)))
      // `drain` runs uninterruptibly (in `ensuring`): only an interruptible wait can be cut short by the timeout
      const written = yield* writeAll.pipe(Effect.interruptible, Effect.timeoutOption(settings.shutdownGracePeriod))
      if (Option.isNone(written)) {
        yield* Effect.logError("Link check results could not be recorded before shutdown; those checks run again").pipe(
          Effect.annotateLogs({ results: unwritten.length })
        )
      }
    })

    const drain = Effect.gen(function*() {
      // after any claim in progress, whose checks are then among the ready ones handed back here
      yield* alone(Effect.sync(() => {
        stopping = true
      }))
      const unstarted = readyIds()
      ready.clear()
      readyCount = 0
      if (unstarted.length > 0) yield* store.releaseClaims(workerId, unstarted).pipe(Effect.ignoreLogged)
      if (running.size > 0) {
        yield* Effect.logInfo("Link checks finishing before shutdown").pipe(Effect.annotateLogs({ running: running.size }))
        const noneRuns = Effect.async<void>((resume) => {
          if (running.size === 0) return resume(Effect.void)
          whenNoneRuns = () => resume(Effect.void)
        })
        const allDone = yield* noneRuns.pipe(Effect.interruptible, Effect.timeoutOption(settings.shutdownGracePeriod))
        if (Option.isNone(allDone)) {
          const unfinished = [...running.values()]
          for (const check of unfinished) cancels.get(check.id)?.()
          cancels.clear()
          yield* store.releaseClaims(workerId, unfinished.map((check) => check.id)).pipe(Effect.ignoreLogged)
          unfinished.forEach(stopChecking)
        }
      }
      yield* recordRemaining
      // Whatever is still claimed (a release that failed) is handed back, and the other workers stop counting this one.
      yield* store.retireWorkers([workerId]).pipe(Effect.ignoreLogged)
    })

    yield* localClaims.register(claimer)
    schedulersInThisProcess.add(workerId)
    yield* Effect.addFinalizer(() => Effect.sync(() => schedulersInThisProcess.delete(workerId)))
    yield* retireGoneWorkersOfThisHost
    yield* heartbeat.pipe(Effect.ignoreLogged)
    // Each loop runs until interrupted; one that fails or dies stops the others, so the scheduler fails as a whole
    // (and its host starts it again) rather than going on without it.
    return yield* Effect.all([claimLoop, heartbeats, recordLoop], { concurrency: "unbounded", discard: true }).pipe(
      Effect.ensuring(drain)
    )
  }).pipe(Effect.scoped)
