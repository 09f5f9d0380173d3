import { installsWithItsCivicstackNeeds } from "@civicstack/kit/testing"
import { fileURLToPath } from "node:url"
import { describe } from "vitest"

/** A service as it installs the queue: built from these sources, packed, and installed from the tarball. */
describe("installing the packed package", () => {
  installsWithItsCivicstackNeeds(fileURLToPath(new URL("..", import.meta.url)), {
    script: `
      const { Effect, Schema } = await import("effect")
      const jobs = await import("@civicstack/jobs")
      const Greet = jobs.JobDefinition.make({ queue: "greet", payload: Schema.Struct({ name: Schema.String }) })
      const program = Effect.gen(function*() {
        const queue = yield* jobs.JobQueue
        const first = yield* queue.enqueue(Greet, { name: "Ada" }, { dedupeKey: "ada" })
        const again = yield* queue.enqueue(Greet, { name: "Ada" }, { dedupeKey: "ada" })
        const [stats] = yield* queue.stats
        return [first.deduplicated, again.deduplicated, again.id === first.id, stats.queue, stats.queued].join(" ")
      })
      console.log(await Effect.runPromise(program.pipe(Effect.provide(jobs.layerMemory))))`,
    printed: "false true true greet 1"
  })
})
