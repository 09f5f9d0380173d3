import { Effect, Schedule } from "effect"

/** How a stopped worker is started again: soon at first, then every 5 seconds (while the database is away). */
export const restartSchedule = Schedule.exponential("200 millis").pipe(Schedule.union(Schedule.spaced("5 seconds")))

/** Runs a background worker, starting it again whenever it stops on a failure, with a warning naming it. */
export const keepRunning = <A, E, R>(name: string, worker: Effect.Effect<A, E, R>): Effect.Effect<A, never, R> =>
  worker.pipe(
    Effect.tapErrorCause((cause) => Effect.logWarning(`${name} stopped; starting it again`, cause)),
    Effect.retry(restartSchedule),
    Effect.orDie
  )
