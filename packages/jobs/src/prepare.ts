import { currentTraceParent } from "@civicstack/kit"
import { Clock, Duration, Effect, ParseResult, Schema } from "effect"
import type { JobDefinition } from "./definition"
import { JobQueueError } from "./errors"
import type { EnqueueItem } from "./JobQueue"

/** A job ready to be stored: payload encoded to JSON text, options resolved against the clock. */
export interface PreparedJob {
  readonly payloadJson: string
  readonly priority: number
  readonly runAt: number
  readonly dedupeKey: string | null
  readonly maxAttempts: number
  readonly traceParent: string | null
}

const PRIORITY_LIMIT = 2 ** 31 - 1

const invalid = (queue: string, message: string) =>
  new JobQueueError({ message: `Cannot enqueue on queue "${queue}": ${message}` })

export const prepareJobs = <A, I>(
  definition: JobDefinition<A, I>,
  items: ReadonlyArray<EnqueueItem<A>>
): Effect.Effect<ReadonlyArray<PreparedJob>, JobQueueError> =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const enqueuedIn = yield* currentTraceParent
    const encode = Schema.encode(definition.payload)
    return yield* Effect.forEach(items, ({ options = {}, payload }) =>
      Effect.gen(function*() {
        const encoded = yield* encode(payload).pipe(
          Effect.mapError((error) =>
            invalid(definition.queue, `the payload does not match its schema: ${ParseResult.TreeFormatter.formatErrorSync(error)}`)
          )
        )
        const priority = options.priority ?? 0
        if (!Number.isInteger(priority) || Math.abs(priority) > PRIORITY_LIMIT) {
          return yield* invalid(definition.queue, `priority must be an integer within ±${PRIORITY_LIMIT}, got ${priority}`)
        }
        const maxAttempts = options.maxAttempts ?? definition.maxAttempts
        if (!Number.isInteger(maxAttempts) || maxAttempts < 1 || maxAttempts > PRIORITY_LIMIT) {
          return yield* invalid(definition.queue, `maxAttempts must be a positive integer, got ${maxAttempts}`)
        }
        const runAt = options.runAt !== undefined
          ? options.runAt.getTime()
          : now + (options.delay === undefined ? 0 : Duration.toMillis(options.delay))
        if (!Number.isFinite(runAt)) {
          return yield* invalid(definition.queue, "runAt must be a valid date and delay a finite duration")
        }
        const payloadJson = yield* Effect.try({
          try: () => JSON.stringify(encoded ?? null),
          catch: (error) => invalid(definition.queue, `the encoded payload is not JSON: ${String(error)}`)
        })
        return {
          payloadJson,
          priority,
          runAt,
          dedupeKey: options.dedupeKey ?? null,
          maxAttempts,
          traceParent: options.traceParent === undefined ? enqueuedIn : options.traceParent
        }
      }))
  })
