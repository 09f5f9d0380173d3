import { Context, Deferred, Duration, Effect, Layer, Ref } from "effect"

/**
 * Wakes the local check scheduler when new work is stored or a slot frees up, so it does not wait for its next
 * poll. A notification sent while nobody waits is kept for the next wait.
 */
export class CheckSignal extends Context.Tag("@civicstack/core-linkcheck/CheckSignal")<CheckSignal, {
  readonly notify: Effect.Effect<void>
  readonly wait: (timeout: Duration.DurationInput) => Effect.Effect<void>
}>() {
  static readonly layer = Layer.effect(
    CheckSignal,
    Effect.gen(function*() {
      const pending = yield* Ref.make(yield* Deferred.make<void>())
      return {
        notify: Effect.flatMap(Ref.get(pending), (deferred) => Deferred.succeed(deferred, undefined)),
        wait: (timeout: Duration.DurationInput) =>
          Effect.flatMap(Ref.get(pending), (deferred) => Effect.timeoutOption(Deferred.await(deferred), timeout)).pipe(
            Effect.zipRight(Effect.flatMap(Deferred.make<void>(), (fresh) => Ref.set(pending, fresh)))
          )
      }
    })
  )
}
