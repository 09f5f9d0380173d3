import { Deferred, Effect, Exit } from "effect"

interface Waiting<In, Out, E> {
  readonly input: In
  readonly key: string
  readonly done: Deferred.Deferred<Out, E>
}

/**
 * Runs requests in batches, `run` answering each batch's inputs in their order. A request starts a batch on the next
 * turn of the event loop while fewer than `maxRunning` run, with the requests that arrived in the same turn; otherwise
 * it waits and goes with the others that arrived meanwhile, so that an idle store answers at once and a busy one serves
 * many requests with each statement. Waiting for the turn matters when the store works in this thread (PGlite): it
 * would otherwise run each request's statement before the next request is even read. Requests with the same key never
 * run in one batch, nor in two batches at once. The batches run in the scope of the caller of `makeBatches`.
 */
export const makeBatches = <In, Out, E>(options: {
  readonly maxRunning: number
  readonly maxSize: number
  readonly keyOf: (input: In) => string
  readonly run: (inputs: ReadonlyArray<In>) => Effect.Effect<ReadonlyArray<Out>, E>
}) =>
  Effect.map(Effect.scope, (scope) => {
    let waiting: Array<Waiting<In, Out, E>> = []
    const runningKeys = new Set<string>()
    let running = 0

    const takeBatch = () => {
      const batch: Array<Waiting<In, Out, E>> = []
      const left: Array<Waiting<In, Out, E>> = []
      for (const request of waiting) {
        if (batch.length < options.maxSize && !runningKeys.has(request.key)) {
          runningKeys.add(request.key)
          batch.push(request)
        } else {
          left.push(request)
        }
      }
      waiting = left
      return batch
    }

    const runBatch = (batch: ReadonlyArray<Waiting<In, Out, E>>): Effect.Effect<void> =>
      options.run(batch.map((request) => request.input)).pipe(
        Effect.exit,
        Effect.flatMap((exit) =>
          Effect.forEach(batch, (request, index) => Deferred.done(request.done, Exit.map(exit, (outputs) => outputs[index]!)), {
            discard: true
          })
        ),
        Effect.ensuring(Effect.suspend(() => {
          running -= 1
          for (const request of batch) runningKeys.delete(request.key)
          return Effect.zipRight(
            Effect.forEach(batch, (request) => Deferred.interrupt(request.done), { discard: true }),
            startBatches
          )
        }))
      )

    const startBatches: Effect.Effect<void> = Effect.suspend(() => {
      const batches: Array<ReadonlyArray<Waiting<In, Out, E>>> = []
      while (running < options.maxRunning && waiting.length > 0) {
        const batch = takeBatch()
        if (batch.length === 0) break
        running += 1
        batches.push(batch)
      }
      return Effect.forEach(batches, (batch) => Effect.forkIn(runBatch(batch), scope), { discard: true })
    })

    let startScheduled = false
    /** Starts batches once the I/O of this turn of the event loop is done (`setImmediate`). */
    const startNextTurn = Effect.async<void>((resume) => {
      setImmediate(() => resume(Effect.void))
    }).pipe(
      Effect.zipRight(Effect.suspend(() => {
        startScheduled = false
        return startBatches
      })),
      Effect.forkIn(scope),
      Effect.asVoid
    )

    return (input: In): Effect.Effect<Out, E> =>
      Effect.flatMap(Deferred.make<Out, E>(), (done) => {
        const request = { input, key: options.keyOf(input), done }
        return Effect.zipRight(
          Effect.suspend(() => {
            waiting.push(request)
            if (startScheduled) return Effect.void
            startScheduled = true
            return startNextTurn
          }),
          // a caller that gives up before its batch starts is not run at all
          Effect.onInterrupt(Deferred.await(done), () =>
            Effect.sync(() => {
              waiting = waiting.filter((other) => other !== request)
            }))
        )
      })
  })
