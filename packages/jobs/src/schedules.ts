import { Clock, Cron, Duration, Effect, Either, Layer, ParseResult, Schema } from "effect"
import type { JobDefinition } from "./definition"
import { InvalidSchedule, type JobQueueError } from "./errors"
import { JobQueue } from "./JobQueue"

/** Enqueues `payload` on `definition`'s queue at every slot of `cron` (5 or 6 fields) in `timeZone` (IANA name). */
export interface RecurringSchedule<A, I> {
  /** Identifies the schedule across copies and restarts. */
  readonly name: string
  readonly cron: string
  readonly timeZone: string
  readonly definition: JobDefinition<A, I>
  readonly payload: A
}

/** The longest single sleep: timers cannot be longer than about 24 days, and waking now and then is cheap. */
const MAX_SLEEP = Duration.hours(1)
const RETRY_AFTER_ERROR = Duration.seconds(5)

interface ParsedSchedule {
  readonly schedule: RecurringSchedule<any, any>
  readonly cron: Cron.Cron
}

const parseSchedules = (
  schedules: ReadonlyArray<RecurringSchedule<any, any>>
): Effect.Effect<ReadonlyArray<ParsedSchedule>, InvalidSchedule> =>
  Effect.forEach(schedules, (schedule, index) => {
    const invalid = (message: string) =>
      new InvalidSchedule({ name: schedule.name, cron: schedule.cron, timeZone: schedule.timeZone, message })
    if (schedules.findIndex((other) => other.name === schedule.name) !== index) {
      return Effect.fail(invalid(`Schedule name "${schedule.name}" is used more than once`))
    }
    const encoded = Schema.encodeEither(schedule.definition.payload)(schedule.payload)
    if (Either.isLeft(encoded)) {
      return Effect.fail(invalid(
        `Schedule "${schedule.name}": the payload does not match its schema: ${
          ParseResult.TreeFormatter.formatErrorSync(encoded.left)
        }`
      ))
    }
    return Either.match(Cron.parse(schedule.cron, schedule.timeZone), {
      onLeft: (error) =>
        Effect.fail(invalid(`Schedule "${schedule.name}": ${error.message} ("${schedule.cron}", ${schedule.timeZone})`)),
      onRight: (cron) => Effect.succeed({ schedule, cron })
    })
  })

/** The latest slot at or before `now`. `Cron.prev` looks strictly before its start, at whole seconds. */
const latestSlot = (cron: Cron.Cron, now: number): Date => Cron.prev(cron, Math.floor(now / 1000) * 1000 + 1000)

const runSchedule = ({ cron, schedule }: ParsedSchedule) =>
  Effect.gen(function*() {
    const jobs = yield* JobQueue
    // A new schedule starts from the current slot, so that deploying it does not fire a slot from the past.
    yield* jobs.ensureSchedule(schedule.name, latestSlot(cron, yield* Clock.currentTimeMillis))

    let handled = -Infinity
    while (true) {
      const now = yield* Clock.currentTimeMillis
      const due = latestSlot(cron, now)
      if (due.getTime() > handled) {
        const fired = yield* jobs.fireSchedule({
          name: schedule.name,
          slot: due,
          definition: schedule.definition,
          payload: schedule.payload
        }).pipe(Effect.either)
        if (Either.isLeft(fired)) {
          yield* Effect.logWarning(`Could not fire schedule "${schedule.name}"; trying again`, fired.left)
          yield* Effect.sleep(RETRY_AFTER_ERROR)
          continue
        }
        handled = due.getTime()
      }
      const next = Cron.next(cron, now).getTime()
      yield* Effect.sleep(Duration.min(Duration.millis(next - now), MAX_SLEEP))
    }
  }).pipe(Effect.annotateLogs({ schedule: schedule.name }))

/**
 * Fires each schedule once per slot, however many copies run it. A slot missed while no copy ran fires once
 * when one starts (only the latest missed slot). Fails at start for an invalid schedule or an unreachable queue.
 */
export const runSchedules = (
  schedules: ReadonlyArray<RecurringSchedule<any, any>>
): Effect.Effect<never, JobQueueError | InvalidSchedule, JobQueue> =>
  Effect.flatMap(parseSchedules(schedules), (parsed) =>
    Effect.flatMap(
      Effect.forEach(parsed, runSchedule, { concurrency: "unbounded", discard: true }),
      () => Effect.never
    ))

/** Validates the schedules when built, then runs them in the layer's scope. */
export const schedulesLayer = (
  schedules: ReadonlyArray<RecurringSchedule<any, any>>
): Layer.Layer<never, InvalidSchedule, JobQueue> =>
  Layer.scopedDiscard(
    Effect.flatMap(parseSchedules(schedules), () =>
      runSchedules(schedules).pipe(
        Effect.catchAllCause((cause) => Effect.logError("Recurring schedules stopped", cause)),
        Effect.forkScoped
      ))
  )
