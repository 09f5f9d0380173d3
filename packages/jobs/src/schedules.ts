import { Cause, Clock, Cron, Duration, Effect, Either, Layer, Option, ParseResult, Schema } from "effect"
import type { JobDefinition } from "./definition"
import { InvalidSchedule, type JobQueueError } from "./errors"
import { JobQueue } from "./JobQueue"
import { latestSlot, nextSlot } from "./slots"

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
/** A defect (a bug, e.g. in the cron library) will likely recur, so it is logged at most this often per schedule. */
const RETRY_AFTER_DEFECT = Duration.minutes(10)

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

const runSchedule = ({ cron, schedule }: ParsedSchedule) =>
  Effect.gen(function*() {
    const jobs = yield* JobQueue
    const startedAt = yield* Clock.currentTimeMillis
    // A new schedule starts from the current slot, so that deploying it does not fire a slot from the past.
    yield* jobs.ensureSchedule(schedule.name, Option.getOrElse(latestSlot(cron, startedAt), () => new Date(startedAt)))

    let handled = -Infinity
    while (true) {
      const now = yield* Clock.currentTimeMillis
      // most wake-ups come before the next slot, which one step of the cron tells without searching
      const due = handled > -Infinity && nextSlot(cron, handled).getTime() > now
        ? Option.none()
        : latestSlot(cron, now)
      if (Option.isSome(due) && due.value.getTime() > handled) {
        const fired = yield* jobs.fireSchedule({
          name: schedule.name,
          slot: due.value,
          definition: schedule.definition,
          payload: schedule.payload
        }).pipe(Effect.either)
        if (Either.isLeft(fired)) {
          yield* Effect.logWarning(`Could not fire schedule "${schedule.name}"; trying again`, fired.left)
          yield* Effect.sleep(RETRY_AFTER_ERROR)
          continue
        }
        handled = due.value.getTime()
      }
      const next = nextSlot(cron, now).getTime()
      yield* Effect.sleep(Duration.min(Duration.millis(next - now), MAX_SLEEP))
    }
  })

/** Runs one schedule; a defect in it is logged and the schedule starts again later, while the others keep running. */
const runScheduleSurvivingDefects = (parsed: ParsedSchedule): Effect.Effect<never, JobQueueError, JobQueue> =>
  runSchedule(parsed).pipe(
    Effect.catchAllDefect((defect) =>
      Effect.logError(
        `Schedule "${parsed.schedule.name}" failed unexpectedly; starting it again in ${
          Duration.format(RETRY_AFTER_DEFECT)
        }`,
        Cause.die(defect)
      ).pipe(
        Effect.zipRight(Effect.sleep(RETRY_AFTER_DEFECT)),
        Effect.zipRight(Effect.suspend(() => runScheduleSurvivingDefects(parsed)))
      )
    ),
    Effect.annotateLogs({ schedule: parsed.schedule.name })
  )

/**
 * Fires each schedule once per slot, however many copies run it. A slot missed while no copy ran fires once
 * when one starts (only the latest missed slot). Fails at start for an invalid schedule or an unreachable queue.
 * A defect in one schedule (e.g. a cron that never matches) is logged at error; the others keep running.
 */
export const runSchedules = (
  schedules: ReadonlyArray<RecurringSchedule<any, any>>
): Effect.Effect<never, JobQueueError | InvalidSchedule, JobQueue> =>
  Effect.flatMap(parseSchedules(schedules), (parsed) =>
    Effect.flatMap(
      Effect.forEach(parsed, runScheduleSurvivingDefects, { concurrency: "unbounded", discard: true }),
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
