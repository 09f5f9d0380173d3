import type { SqlError } from "@effect/sql/SqlError"
import type { Option, Scope } from "effect"
import { Chunk, Context, Duration, Effect, TestClock, TestServices } from "effect"
import type { JobQueue } from "../src/index"

/** What a backend gives the shared suite besides the queue under test. */
export class TestBackend extends Context.Tag("@civicstack/jobs/test/TestBackend")<TestBackend, {
  /** Another copy of the queue over the same store (on PostgreSQL: its own connection pool), as a second server would have. */
  readonly secondCopy: Context.Context<JobQueue>
  /** Runs an effect in a database transaction; none for backends without transactions. */
  readonly transaction: Option.Option<<A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | SqlError, R>>
}>() {}

export type SuiteEffect = Effect.Effect<void, unknown, JobQueue | TestBackend | Scope.Scope>

/** A real pause: work on a real database takes real time, whatever the TestClock says. */
export const realPause = (millis: number) => TestServices.provideLive(Effect.sleep(Duration.millis(millis)))

/**
 * Waits (in real time) until `check` holds, optionally moving the TestClock forward by `step` between checks,
 * so that polling workers get to run. Fails after about `rounds * 5` ms.
 */
export const eventually = <E, R>(
  check: Effect.Effect<boolean, E, R>,
  options: { readonly step?: Duration.DurationInput; readonly rounds?: number; readonly what?: string } = {}
): Effect.Effect<void, E | Error, R> =>
  Effect.gen(function*() {
    const rounds = options.rounds ?? 2000
    for (let round = 0; round < rounds; round++) {
      if (yield* check) return
      if (options.step !== undefined) yield* TestClock.adjust(options.step)
      yield* realPause(5)
    }
    return yield* Effect.fail(new Error(`Timed out waiting for ${options.what ?? "a condition"}`))
  })

/** Waits until at least `count` fibers sleep on the TestClock past the current time (e.g. schedulers waiting for their next slot). */
export const sleepersAtLeast = (count: number) =>
  eventually(
    Effect.gen(function*() {
      const now = yield* TestClock.currentTimeMillis
      const sleeps = yield* TestClock.sleeps()
      return Chunk.size(Chunk.filter(sleeps, (deadline) => deadline > now)) >= count
    }),
    { what: `${count} sleeping fibers` }
  )
