import { Context, Effect, Layer, Option } from "effect"
import { JobQueue, layerMemory } from "../src/index"
import { TestBackend } from "./helpers"
import { jobQueueSuite } from "./suite"

const memoryBackend = Layer.effect(
  TestBackend,
  Effect.map(JobQueue, (jobs) => ({ secondCopy: Context.make(JobQueue, jobs), transaction: Option.none() }))
).pipe(Layer.provideMerge(layerMemory))

jobQueueSuite("memory", memoryBackend, { transactional: false })
