import { it } from "@effect/vitest"
import { Duration, Effect, Layer, TestClock } from "effect"
import { afterAll, beforeAll, describe, expect } from "vitest"
import { LinkChecker } from "../../src/services/LinkChecker"
import { layerMemory } from "../../src/storage/memory"
import { deleteOldChecks } from "../../src/workers/cleanup"
import { startFixtureFleet } from "../fixtures/fleet"
import type { FixtureFleet } from "../fixtures/fleet"
import { linkcheckWithoutWorkers } from "../fixtures/service"

let fleet: FixtureFleet
beforeAll(async () => {
  fleet = await startFixtureFleet()
})
afterAll(() => fleet?.close())

describe("cleanup", () => {
  it.effect("deletes checks completed over the retention ago, with their batches, and keeps newer ones", () =>
    Effect.gen(function*() {
      const linkChecker = yield* LinkChecker
      yield* TestClock.adjust("1 day")
      const old = yield* linkChecker.check({ uri: "mailto:old@example.org", checkedWithin: 0, synchronous: true })
      const oldBatch = yield* linkChecker.createBatch({ uris: ["mailto:old@example.org"], checkedWithin: "4 hours", priority: "high" })
      yield* TestClock.adjust("29 days")
      yield* linkChecker.check({ uri: "mailto:new@example.org", checkedWithin: 0, synchronous: true })
      yield* deleteOldChecks(Duration.toSeconds("28 days"))
      const oldAgain = yield* linkChecker.check({ uri: old.uri, checkedWithin: "100 days", synchronous: false })
      expect(oldAgain.status).toBe("pending")
      const fresh = yield* linkChecker.check({ uri: "mailto:new@example.org", checkedWithin: "1 day", synchronous: false })
      expect(fresh.status).toBe("caution")
      const gone = yield* Effect.flip(linkChecker.getBatch(oldBatch.batch.id, "every batch"))
      expect(gone._tag).toBe("BatchNotFound")
    }).pipe(Effect.provide(Layer.unwrapEffect(Effect.sync(() => linkcheckWithoutWorkers(fleet, layerMemory()))))))
})
