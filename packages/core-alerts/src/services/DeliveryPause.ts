import { Clock, Context, Effect, Layer, Ref } from "effect"

/** Why delivery stopped, since when and until when, and how often it has stopped since the process started. */
export interface PauseState {
  readonly pausedUntil: Date | null
  readonly reason: string | null
  readonly pauses: number
}

/**
 * Delivery stops for a while when the provider refuses to send for the service at all (a relay, authentication or
 * policy refusal): every email would fail the same way, using up its attempts. The pause is shared by the delivery
 * worker, which keeps it, and the health checks, which show it.
 */
export class DeliveryPause extends Context.Tag("@civicstack/core-alerts/DeliveryPause")<DeliveryPause, {
  readonly state: Effect.Effect<PauseState>
  /** Stops delivery until `until`; logged at ERROR once per pause. */
  readonly pause: (until: Date, reason: string) => Effect.Effect<void>
  /** The milliseconds delivery must still wait, or 0. */
  readonly remainingMillis: Effect.Effect<number>
}>() {
  static readonly layer: Layer.Layer<DeliveryPause> = Layer.effect(
    DeliveryPause,
    Effect.gen(function*() {
      const state = yield* Ref.make<PauseState>({ pausedUntil: null, reason: null, pauses: 0 })
      const remainingMillis = Effect.zipWith(Ref.get(state), Clock.currentTimeMillis, ({ pausedUntil }, now) =>
        pausedUntil === null ? 0 : Math.max(0, pausedUntil.getTime() - now))
      return {
        state: Ref.get(state),
        remainingMillis,
        pause: (until, reason) =>
          Effect.gen(function*() {
            const alreadyPaused = (yield* remainingMillis) > 0
            yield* Ref.update(state, (current) => ({
              pausedUntil: current.pausedUntil !== null && current.pausedUntil > until ? current.pausedUntil : until,
              reason,
              pauses: current.pauses + (alreadyPaused ? 0 : 1)
            }))
            if (!alreadyPaused) {
              yield* Effect.logError("Email delivery paused: the provider refuses to send for this service").pipe(
                Effect.annotateLogs({ reason, until: until.toISOString() })
              )
            }
          })
      }
    })
  )
}
