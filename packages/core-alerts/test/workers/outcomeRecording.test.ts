import { describe, expect, it } from "@effect/vitest"
import { Clock, Duration, Effect, Fiber, Layer, Option } from "effect"
import { runDeliveryWorker } from "../../src/workers/delivery"
import { EmailStore } from "../../src/storage/EmailStore"
import { deliverySettings } from "../../src/settings"
import { StoreError } from "@civicstack/kit"
import { memoryStores } from "../fixtures/backends"
import { at, clockAt } from "../fixtures/records"
import { advanceBy, advanceUntil, makeScriptedProvider } from "../fixtures/workers"

/** The store, except that `sent` cannot be written before `until` (the database is away). */
const sentUnwritableUntil = (until: Date) =>
  Layer.effect(EmailStore, Effect.map(EmailStore, (store) => {
    const away = <A>(write: Effect.Effect<A, StoreError>) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        now < until.getTime() ? Effect.fail(new StoreError({ message: "the database is away" })) : write)
    return {
      ...store,
      markSent: (claim: Parameters<typeof store.markSent>[0]) => away(store.markSent(claim)),
      markSentMany: (claims: Parameters<typeof store.markSentMany>[0]) => away(store.markSentMany(claims))
    }
  }))

describe("the delivery worker when it cannot record that an email was sent", () => {
  it.effect("keeps trying while the claim holds, so an email the provider took is not sent again after the lease", () =>
    Effect.provide(Effect.zipRight(clockAt(0), Effect.gen(function*() {
      const emails = yield* EmailStore
      const ids = yield* Effect.forEach([0, 1, 2], (n) =>
        emails.queueEmail({ address: `reader${n}@example.com`, subject: "Hello", body: "Body." }))
      const provider = makeScriptedProvider()
      const settings = deliverySettings({ lease: Duration.seconds(20), pollInterval: Duration.millis(500) })
      const worker = yield* Effect.fork(runDeliveryWorker(settings).pipe(
        Effect.provide(Layer.merge(provider.layer, sentUnwritableUntil(at(5))))
      ))
      yield* advanceUntil("three deliveries", () => provider.delivered().length === 3, "100 millis")
      // well past the lease: an email still claimed would have been claimed and sent again by now
      yield* advanceBy(Duration.seconds(60), "500 millis")
      yield* Fiber.interrupt(worker)

      expect(provider.delivered().map((attempt) => attempt.email.id).sort()).toEqual([...ids].sort())
      const stored = yield* Effect.forEach(ids, (id) => Effect.map(emails.email(id), Option.getOrThrow))
      expect(stored.map((email) => email.status)).toEqual(["sent", "sent", "sent"])
    })), memoryStores()))
})
