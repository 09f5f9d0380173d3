import { installsWithItsCivicstackNeeds } from "@civicstack/kit/testing"
import { fileURLToPath } from "node:url"
import { describe } from "vitest"

/**
 * A host as it installs the service: built from these sources, packed, and installed from the tarball with those of
 * @civicstack/jobs and @civicstack/outbound. The synchronous check goes through the outbound guard, which refuses
 * the loopback address before connecting.
 */
describe("installing the packed package", () => {
  installsWithItsCivicstackNeeds(fileURLToPath(new URL("..", import.meta.url)), {
    script: `
      const { Effect } = await import("effect")
      const linkcheck = await import("@civicstack/core-linkcheck")
      const program = Effect.gen(function*() {
        const checker = yield* linkcheck.LinkChecker
        const queued = yield* checker.check({ uri: "https://www.example.com/" })
        const loopback = yield* checker.check({ uri: "http://127.0.0.1:9/", synchronous: true })
        return [queued.status, loopback.status, loopback.problemSummary].join(" ")
      })
      console.log(await Effect.runPromise(program.pipe(Effect.provide(linkcheck.layerMemory()))))`,
    printed: "pending broken Private address"
  })
})
