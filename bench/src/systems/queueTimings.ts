import type { JobQueue } from "@civicstack/jobs"
import type { Context } from "effect"
import { Duration, Effect } from "effect"
import { percentileOfSorted } from "../percentile"

type JobQueueService = Context.Tag.Service<JobQueue>

interface OperationLog {
  readonly durationsMs: Array<number>
  /** Jobs enqueued, claimed, completed or recovered by the calls. */
  items: number
  /** Calls that concerned no job at all (e.g. a claim that found nothing). */
  empty: number
  /** Finished jobs whose completion rode along with the calls (a claim deletes them). */
  completionsCarried: number
}

/**
 * Times every call the producer and the workers make to our JobQueue, to show where the
 * time goes: how many round trips each job costs and how long each kind takes.
 */
export interface QueueTimings {
  readonly instrument: (queue: JobQueueService) => JobQueueService
  readonly render: (jobs: number) => string
}

export const makeQueueTimings = (): QueueTimings => {
  const operations = new Map<string, OperationLog>()

  const timed = <A, E>(
    operation: string,
    itemsOf: (result: A) => number,
    effect: Effect.Effect<A, E>,
    completionsCarried = 0
  ) =>
    Effect.map(Effect.timed(effect), ([duration, result]) => {
      const log = operations.get(operation) ?? { durationsMs: [], items: 0, empty: 0, completionsCarried: 0 }
      operations.set(operation, log)
      const items = itemsOf(result)
      log.durationsMs.push(Duration.toMillis(duration))
      log.items += items
      log.completionsCarried += completionsCarried
      if (items === 0) log.empty += 1
      return result
    })

  const instrument = (queue: JobQueueService): JobQueueService => ({
    ...queue,
    enqueue: (definition, payload, options) => timed("enqueue", () => 1, queue.enqueue(definition, payload, options)),
    enqueueMany: (definition, items) =>
      timed("enqueueMany", (enqueued) => enqueued.length, queue.enqueueMany(definition, items)),
    claim: (options) =>
      timed("claim", (claimed) => claimed.length, queue.claim(options), options.completed?.length ?? 0),
    complete: (claims) => timed("complete", () => claims.length, queue.complete(claims)),
    extendLeases: (claims, leaseDuration) =>
      timed("extendLeases", () => claims.length, queue.extendLeases(claims, leaseDuration)),
    recoverExpiredLeases: (name) => timed("recoverExpiredLeases", (recovered) => recovered, queue.recoverExpiredLeases(name))
  })

  const render = (jobs: number) => {
    const header =
      "| operation | calls | calls per job | jobs per call | empty calls | completions carried | total ms | mean ms | p50 ms | p99 ms |"
    const rule = "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    const rows = Array.from(operations, ([operation, log]) => {
      const sorted = Float64Array.from(log.durationsMs).sort()
      const calls = sorted.length
      const total = sorted.reduce((sum, duration) => sum + duration, 0)
      return `| ${operation} | ${calls} | ${(calls / jobs).toFixed(2)} | ${(log.items / calls).toFixed(1)} | ${log.empty} | ${log.completionsCarried} | ${
        total.toFixed(0)
      } | ${(total / calls).toFixed(2)} | ${percentileOfSorted(sorted, 50)?.toFixed(2)} | ${
        percentileOfSorted(sorted, 99)?.toFixed(2)
      } |`
    })
    return [header, rule, ...rows].join("\n")
  }

  return { instrument, render }
}
