import { Context, Effect, Layer, Ref } from "effect"
import { EmailQueue } from "../../src/delivery/EmailQueue"
import type { QueueFigures, SingleEmail } from "../../src/delivery/EmailQueue"

/**
 * A double of the `EmailQueue` port: it records the emails queued (in memory, outside any store transaction) and
 * reports the figures a test sets, so tests can read the auth-token email and drive the health check.
 */
export class RecordingEmailQueue extends Context.Tag("test/RecordingEmailQueue")<RecordingEmailQueue, {
  readonly queued: Effect.Effect<ReadonlyArray<SingleEmail>>
  readonly setFigures: (figures: QueueFigures) => Effect.Effect<void>
}>() {}

export const recordingEmailQueue: Layer.Layer<EmailQueue | RecordingEmailQueue> = Layer.effectContext(
  Effect.gen(function*() {
    const queued = yield* Ref.make<ReadonlyArray<SingleEmail>>([])
    const figures = yield* Ref.make<QueueFigures>({ size: 0, oldestImmediatePendingSince: null })
    return Context.make(EmailQueue, {
      queue: (email) => Ref.update(queued, (emails) => [...emails, email]),
      figures: Ref.get(figures)
    }).pipe(Context.add(RecordingEmailQueue, { queued: Ref.get(queued), setFigures: (next) => Ref.set(figures, next) }))
  })
)
