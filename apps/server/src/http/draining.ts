import { Context, Effect, Layer, Ref } from "effect"

/** Set once shutdown begins: readiness turns 503 and responses ask keep-alive clients to disconnect. */
export class Draining extends Context.Tag("@civicstack/server/Draining")<
  Draining,
  { readonly isDraining: Effect.Effect<boolean>; readonly begin: Effect.Effect<void> }
>() {
  static readonly layer = Layer.effect(
    Draining,
    Effect.map(Ref.make(false), (flag) => ({ isDraining: Ref.get(flag), begin: Ref.set(flag, true) }))
  )
}
