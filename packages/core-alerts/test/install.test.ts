import { installsWithItsCivicstackNeeds } from "@civicstack/kit/testing"
import { fileURLToPath } from "node:url"
import { describe } from "vitest"

/**
 * A host as it installs the service: built from these sources, packed, and installed from the tarball with those of
 * @civicstack/jobs and @civicstack/outbound.
 */
describe("installing the packed package", () => {
  installsWithItsCivicstackNeeds(fileURLToPath(new URL("..", import.meta.url)), {
    script: `
      const { Effect, Redacted } = await import("effect")
      const alerts = await import("@civicstack/core-alerts")
      const criteria = alerts.normaliseListCriteria({ tags: { topics: ["tax"] }, links: {} })
      const program = Effect.gen(function*() {
        const service = yield* alerts.Alerts
        const found = yield* service.findOrCreateList({ title: "Tax", criteria })
        const again = yield* service.findOrCreateList({ title: "Tax", criteria })
        return [found.created, again.created, again.value.slug].join(" ")
      })
      const layer = alerts.layerMemory({ authTokenSecret: Redacted.make("s".repeat(40)) })
      console.log(await Effect.runPromise(program.pipe(Effect.provide(layer))))`,
    printed: "true false tax"
  })
})
