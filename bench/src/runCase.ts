import { Clock, Console, Duration, Effect, Option, type Scope } from "effect"
import { loadavg } from "node:os"
import { BenchError, failWith } from "./benchError"
import { type EnqueueMode, Measured } from "./caseResult"
import { freshDatabase } from "./freshDatabase"
import { enqueueInBulk, enqueueOneByOne } from "./producer"
import { percentileOfSorted } from "./percentile"
import { makeRecorder, type Recorder } from "./recorder"
import type { BenchSettings } from "./settings"
import type { BenchSystem, QueueUnderTest, StartContext } from "./system"

/** Time given to late duplicate deliveries to show up after the last job started. */
const settleTime = Duration.seconds(1)

/** What the producer saw: how many jobs it has enqueued, and how long each enqueue call took. */
interface ProducerLog {
  enqueued: number
  readonly callDurationsMs: Array<number>
}

const produce = (queue: QueueUnderTest, mode: EnqueueMode, settings: BenchSettings, log: ProducerLog) => {
  const logged = <A>(count: (input: A) => number, call: (input: A) => Effect.Effect<void, BenchError>) => (input: A) =>
    Effect.map(Effect.timed(call(input)), ([duration]) => {
      log.enqueued += count(input)
      log.callDurationsMs.push(Duration.toMillis(duration))
    })
  if (mode === "single") {
    return enqueueOneByOne(settings.jobs, settings.enqueueConcurrency, logged(() => 1, queue.enqueue))
  }
  return Option.match(queue.enqueueBulk, {
    onNone: () => Effect.fail(new BenchError({ message: "this system has no bulk insert" })),
    onSome: (enqueueBulk) =>
      enqueueInBulk(settings.jobs, settings.bulkSize, logged((payloads) => payloads.length, enqueueBulk))
  })
}

/** Prints progress on stderr every second while the enclosing scope is open. */
const reportProgress = (caseName: string, jobs: number, recorder: Recorder, enqueued: () => number) => {
  let previouslyStarted = 0
  const report = Effect.suspend(() => {
    const started = recorder.distinctSoFar()
    const perSecond = started - previouslyStarted
    previouslyStarted = started
    return Console.error(`[${caseName}] enqueued ${enqueued()}/${jobs}, started ${started}/${jobs} (+${perSecond}/s)`)
  })
  return Effect.forkScoped(Effect.forever(Effect.delay(report, "1 second")))
}

/** Succeeds with true once every job started, with false when none started for `stallSeconds`. */
const awaitDrain = (recorder: Recorder, stallSeconds: number) => {
  const stalled = Effect.gen(function* () {
    let lastCount = recorder.distinctSoFar()
    let lastChangeAt = yield* Clock.currentTimeMillis
    while (true) {
      yield* Effect.sleep("1 second")
      const now = yield* Clock.currentTimeMillis
      const count = recorder.distinctSoFar()
      if (count !== lastCount) {
        lastCount = count
        lastChangeAt = now
      } else if (now - lastChangeAt >= stallSeconds * 1000) {
        return false
      }
    }
  })
  return Effect.raceFirst(Effect.as(recorder.allStarted, true), stalled)
}

/** Starts the workers, enqueues every job while they run and waits for all of them; stops the workers. */
const measure = (
  system: BenchSystem,
  mode: EnqueueMode,
  settings: BenchSettings,
  start: (context: StartContext) => Effect.Effect<QueueUnderTest, BenchError, Scope.Scope>
) =>
  Effect.scoped(
    Effect.gen(function* () {
      const recorder = yield* makeRecorder(settings.jobs)
      const queue = yield* start({ settings, recorder })

      const producerLog: ProducerLog = { enqueued: 0, callDurationsMs: [] }
      yield* reportProgress(`${system.label}, ${mode}`, settings.jobs, recorder, () => producerLog.enqueued)

      const firstEnqueueAt = yield* Clock.currentTimeMillis
      const cpuAtStart = process.cpuUsage()
      yield* produce(queue, mode, settings, producerLog)
      const lastEnqueueDoneAt = yield* Clock.currentTimeMillis
      const drained = yield* awaitDrain(recorder, settings.stallSeconds)
      const cpu = process.cpuUsage(cpuAtStart)
      yield* Effect.sleep(settleTime)
      const observed = recorder.observe()
      const endAt = drained ? observed.lastFirstStartAt : yield* Clock.currentTimeMillis
      return {
        systemId: system.id,
        label: system.label,
        backend: system.backend,
        ours: system.ours,
        enqueueMode: mode,
        settings: system.describe(settings),
        jobs: settings.jobs,
        drained,
        elapsedMs: endAt - firstEnqueueAt,
        enqueueMs: lastEnqueueDoneAt - firstEnqueueAt,
        enqueueCallP50Ms: percentileOfSorted(Float64Array.from(producerLog.callDurationsMs).sort(), 50),
        processCpuMs: (cpu.user + cpu.system) / 1000,
        loadAverage: loadavg()[0] ?? 0,
        distinct: observed.distinct,
        duplicates: observed.duplicates,
        missing: observed.missing,
        unknown: observed.unknown,
        delayP50Ms: observed.delayP50Ms,
        delayP99Ms: observed.delayP99Ms
      }
    })
  )

/**
 * Runs one system with one enqueue mode in this process and checks that each job ran
 * exactly once. On PostgreSQL the system gets a database of its own, whose server-side
 * activity is read once the system has stopped, and which is dropped before this returns.
 */
export const runCase = (system: BenchSystem, mode: EnqueueMode, settings: BenchSettings) => {
  if (system.backend === "PGlite") {
    return Effect.map(measure(system, mode, settings, system.start), (run) =>
      new Measured({ ...run, serverActivity: null }))
  }
  return Effect.scoped(
    Effect.gen(function* () {
      const database = yield* freshDatabase(settings.databaseUrl, system.id)
      const run = yield* measure(system, mode, settings, (context) =>
        system.start({ ...context, databaseUrl: database.url }))
      const serverActivity = yield* database.activityOnceIdle.pipe(
        Effect.mapError(failWith("could not read the database's statistics"))
      )
      return new Measured({ ...run, serverActivity })
    })
  )
}
