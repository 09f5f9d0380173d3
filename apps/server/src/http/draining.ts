import { Context, Effect, Layer, Ref } from "effect"

/**
 * Set once shutdown begins: readiness turns 503, responses ask keep-alive clients to disconnect, and what registered
 * with `onBegin` (the HTTP host stops accepting connections) happens at once, before anything finishes its work.
 */
export class Draining extends Context.Tag("@civicstack/server/Draining")<Draining, {
  readonly isDraining: Effect.Effect<boolean>
  readonly begin: Effect.Effect<void>
  readonly onBegin: (action: Effect.Effect<void>) => Effect.Effect<void>
}>() {
  static readonly layer = Layer.effect(
    Draining,
    Effect.gen(function*() {
      const flag = yield* Ref.make(false)
      const actions = yield* Ref.make<ReadonlyArray<Effect.Effect<void>>>([])
      return {
        isDraining: Ref.get(flag),
        begin: Effect.flatMap(Ref.getAndSet(flag, true), (began) =>
          began ? Effect.void : Effect.flatMap(Ref.get(actions), Effect.all)).pipe(Effect.asVoid),
        onBegin: (action) => Ref.update(actions, (registered) => [...registered, action])
      }
    })
  )

  /** Begins draining when its scope closes: build it after everything else, so that this happens first. */
  static readonly beginOnShutdown = Layer.scopedDiscard(
    Effect.flatMap(Draining, (draining) => Effect.addFinalizer(() => draining.begin))
  )
}
