import { it } from "@effect/vitest"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect } from "vitest"
import { LinkChecker } from "../../src/services/LinkChecker"
import { LinkcheckStore } from "../../src/storage/LinkcheckStore"
import { layerMemory } from "../../src/storage/memory"
import { deliverWebhook } from "../../src/workers/webhookSender"
import { startFixtureFleet } from "../fixtures/fleet"
import type { FixtureFleet } from "../fixtures/fleet"
import { linkcheckWithoutWorkers } from "../fixtures/service"
import { startWebhookReceiver } from "../fixtures/webhookReceiver"

let fleet: FixtureFleet
beforeAll(async () => {
  fleet = await startFixtureFleet()
})
afterAll(() => fleet?.close())

describe("webhook delivery", () => {
  /** A batch with a webhook to a receiver answering `statuses`, and its delivery by the service's own sender. */
  const deliverTo = (statuses: ReadonlyArray<number>) =>
    Effect.gen(function*() {
      const receiver = yield* Effect.acquireRelease(
        Effect.promise(() => startWebhookReceiver(statuses)),
        (r) => Effect.promise(r.close)
      )
      const linkChecker = yield* LinkChecker
      const created = yield* linkChecker.createBatch({
        uris: ["mailto:someone@example.org"],
        checkedWithin: 0,
        webhook: { uri: receiver.url, secretToken: null }
      })
      return { receiver, deliver: deliverWebhook(created.batch.id), batchId: created.batch.id }
    })

  const webhookAttempts = (batchId: number) => Effect.flatMap(LinkcheckStore, (store) => store.webhookAttempts(batchId))

  it.scoped("fails on 5xx and 429 so the queue retries, records every attempt, and stops on success", () =>
    Effect.gen(function*() {
      const { batchId, deliver, receiver } = yield* deliverTo([500, 429])
      expect((yield* Effect.flip(deliver))._tag).toBe("WebhookNotDelivered")
      expect((yield* Effect.flip(deliver))._tag).toBe("WebhookNotDelivered")
      yield* deliver
      expect(receiver.received).toHaveLength(3)
      expect((yield* webhookAttempts(batchId)).map((attempt) => attempt.statusCode)).toEqual([500, 429, 200])
    }).pipe(Effect.provide(linkcheckWithoutWorkers(fleet, layerMemory()))))

  it.scoped("a delivery run again after the receiver took the webhook sends nothing", () =>
    Effect.gen(function*() {
      const { batchId, deliver, receiver } = yield* deliverTo([200])
      yield* deliver
      yield* deliver
      expect(receiver.received).toHaveLength(1)
      expect((yield* webhookAttempts(batchId)).map((attempt) => [attempt.statusCode, attempt.final])).toEqual([[200, true]])
    }).pipe(Effect.provide(linkcheckWithoutWorkers(fleet, layerMemory()))))

  it.scoped("gives up without retrying when the receiver refuses with a 4xx", () =>
    Effect.gen(function*() {
      const { batchId, deliver } = yield* deliverTo([404])
      yield* deliver
      expect((yield* webhookAttempts(batchId)).map((attempt) => attempt.statusCode)).toEqual([404])
    }).pipe(Effect.provide(linkcheckWithoutWorkers(fleet, layerMemory()))))

  it.scoped("does not send the webhook to a private address unless allowed, and records the refusal once, as final", () =>
    Effect.gen(function*() {
      const { batchId, deliver, receiver } = yield* deliverTo([])
      yield* deliver
      yield* deliver
      expect(receiver.received).toHaveLength(0)
      const attempts = yield* webhookAttempts(batchId)
      expect(attempts.map((attempt) => [attempt.statusCode, attempt.final])).toEqual([[null, true]])
      expect(attempts[0]?.error).toContain("non-public")
    }).pipe(Effect.provide(linkcheckWithoutWorkers(fleet, layerMemory(), { allowPrivateAddresses: false }))))
})
