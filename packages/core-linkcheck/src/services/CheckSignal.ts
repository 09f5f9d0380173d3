import { Context, Deferred, Duration, Effect, Exit, FiberId, Layer } from "effect"

/**
 * Wakes the local check scheduler when new work is stored or a slot frees up, so it does not wait for its next
 * poll. A notification sent while nobody waits is kept for the next wait.
 */
export class CheckSignal extends Context.Tag("@civicstack/core-linkcheck/CheckSignal")<CheckSignal, {
  readonly notify: Effect.Effect<void>
  /** `notify` outside an effect, for the scheduler's callbacks. */
  readonly unsafeNotify: () => void
  readonly wait: (timeout: Duration.DurationInput) => Effect.Effect<void>
}>() {
  static readonly layer = Layer.sync(CheckSignal, () => {
    let pending = Deferred.unsafeMake<void>(FiberId.none)
    const unsafeNotify = () => {
      Deferred.unsafeDone(pending, Exit.void)
    }
    return {
      notify: Effect.sync(unsafeNotify),
      unsafeNotify,
      wait: (timeout: Duration.DurationInput) =>
        Effect.suspend(() => Effect.timeoutOption(Deferred.await(pending), timeout)).pipe(
          Effect.zipRight(Effect.sync(() => {
            pending = Deferred.unsafeMake<void>(FiberId.none)
          }))
        )
    }
  })
}
