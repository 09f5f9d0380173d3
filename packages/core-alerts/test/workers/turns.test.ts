import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Layer } from "effect"
import { runDeliveryWorker } from "../../src/workers/delivery"
import { DeliveryPause } from "../../src/services/DeliveryPause"
import { EmailProvider } from "../../src/services/EmailProvider"
import type { OutgoingEmail } from "../../src/services/EmailProvider"
import { EmailStore } from "../../src/storage/EmailStore"
import { deliverySettings } from "../../src/settings"
import { makeTurnGate } from "../../src/workers/turnGate"
import { memoryStores } from "../fixtures/backends"
import { clockAt } from "../fixtures/records"
import { waitFor } from "../fixtures/workers"

/**
 * A provider that takes every email at once (no I/O, so without a limit every lane would send in one turn), and
 * notes how many it had taken each time the event loop reached its check phase.
 */
const instantProvider = () => {
  const sent: Array<OutgoingEmail> = []
  const sentAtTurnEnds: Array<number> = []
  const noteTurnEnd = () =>
    setImmediate(() => {
      sentAtTurnEnds.push(sent.length)
      if (sentAtTurnEnds.length < 1000) noteTurnEnd()
    })
  return {
    sent,
    sentAtTurnEnds,
    layer: Layer.succeed(EmailProvider, {
      name: "instant",
      send: (email) =>
        Effect.sync(() => {
          if (sent.length === 0) noteTurnEnd()
          sent.push(email)
        })
    })
  }
}

describe("delivery and the event loop", () => {
  it.effect("starts at most sendsPerTurn sends between two turns of the event loop, and still sends them all", () =>
    Effect.provide(Effect.zipRight(clockAt(0), Effect.gen(function*() {
      const emails = yield* EmailStore
      yield* Effect.forEach(Array.from({ length: 60 }, (_, n) => n), (n) =>
        emails.queueEmail({ address: `reader${n}@example.com`, subject: "Hello", body: "Body." }))
      const provider = instantProvider()
      const settings = deliverySettings({ concurrency: 16, sendsPerTurn: 4, rateLimitPerSecond: 1_000_000, pollInterval: Duration.hours(1) })
      const worker = yield* Effect.fork(runDeliveryWorker(settings).pipe(Effect.provide(provider.layer), Effect.provide(DeliveryPause.layer)))
      yield* waitFor("every email sent", () => provider.sent.length === 60)
      yield* Fiber.interrupt(worker)

      // the provider's check-phase callback and the gate's run in the same phase, in either order: one window of the
      // provider's can hold the end of one of the gate's turns and the start of the next
      const perWindow = provider.sentAtTurnEnds.map((total, turn) => total - (provider.sentAtTurnEnds[turn - 1] ?? 0))
      expect(Math.max(...perWindow)).toBeLessThanOrEqual(2 * 4)
      expect(perWindow.filter((sends) => sends > 0).length).toBeGreaterThanOrEqual(60 / (2 * 4))
      expect(new Set(provider.sent.map((email) => email.id)).size).toBe(60)
    })), memoryStores()))
})

describe("makeTurnGate", () => {
  it.effect("lets the waiting callers through in later turns, perTurn at a time, in the order they came", () =>
    Effect.gen(function*() {
      const gate = yield* makeTurnGate(2)
      const order: Array<number> = []
      const passers = yield* Effect.forEach([0, 1, 2, 3, 4], (n) =>
        Effect.fork(Effect.zipRight(gate.pass, Effect.sync(() => order.push(n)))))
      const afterFirstTurn = yield* Effect.promise(() => new Promise<ReadonlyArray<number>>((resolve) => setImmediate(() => resolve([...order]))))
      yield* Fiber.joinAll(passers)

      expect(afterFirstTurn.length).toBeLessThanOrEqual(4)
      expect(order).toEqual([0, 1, 2, 3, 4])
    }))

  it.effect("a caller interrupted while it waits gives up its place", () =>
    Effect.gen(function*() {
      const gate = yield* makeTurnGate(1)
      yield* gate.pass
      const waiting = yield* Effect.fork(gate.pass)
      const next = yield* Effect.fork(Effect.zipRight(gate.pass, Effect.succeed("through")))
      yield* Fiber.interrupt(waiting)
      expect(yield* Fiber.join(next)).toBe("through")
    }))
})
