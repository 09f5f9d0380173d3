import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { LinkInspector } from "../../../src/services/LinkInspector"
import type { InspectorConfig } from "../../../src/services/LinkInspector"
import { startOtherThreadServer } from "../../fixtures/otherThreadServer"
import type { OtherThreadServer } from "../../fixtures/otherThreadServer"
import { expectOk, expectSingleProblem } from "./support"

let server: OtherThreadServer
beforeAll(async () => {
  server = await startOtherThreadServer()
})
afterAll(() => server.close())

const config = (overrides: Partial<InspectorConfig>): Partial<InspectorConfig> => ({
  allowPrivateAddresses: true,
  connectTimeout: "2 seconds",
  responseTimeout: "5 seconds",
  slowThreshold: "5 seconds",
  ...overrides
})

/** Checks `/?ms={answerAfter}` with nothing else on this thread. */
const inspectWithFreeEventLoop = (answerAfter: number, overrides: Partial<InspectorConfig>) =>
  Effect.flatMap(LinkInspector, (inspector) =>
    inspector.inspect(`${server.url}/?ms=${answerAfter}`, { background: false })).pipe(
      Effect.map(({ result }) => result),
      Effect.provide(LinkInspector.layer(config(overrides)))
    )

/**
 * Checks `/?ms={answerAfter}` while this thread's event loop is blocked from `blockFrom` ms after the server has
 * the request until `blockUntil` ms after the check began: the answer arrives while nothing on this thread can read it.
 */
const checkWhileBlocked = (
  timing: { readonly answerAfter: number; readonly blockFrom: number; readonly blockUntil: number },
  overrides: Partial<InspectorConfig>
) =>
  Effect.gen(function*() {
    const received = server.requestsReceived()
    const answered = server.answersWritten()
    const began = performance.now()
    // blocked inside a setImmediate callback: the loop then runs its due timers before it reads the sockets again
    const block = Effect.async<boolean>((resume) => {
      setImmediate(() => resume(Effect.succeed(server.blockUntilAnswered(answered, began + timing.blockUntil))))
    })
    const blocking = Effect.promise(() => server.receivedMoreThan(received)).pipe(
      Effect.zipRight(Effect.sleep(timing.blockFrom)),
      Effect.zipRight(block)
    )
    const [outcome, answeredWhileBlocked] = yield* Effect.all([
      Effect.flatMap(LinkInspector, (inspector) =>
        inspector.inspect(`${server.url}/?ms=${timing.answerAfter}`, { background: false }).pipe(Effect.map(({ result }) => result))),
      blocking
    ], { concurrency: "unbounded" }).pipe(Effect.provide(LinkInspector.layer(config(overrides))))
    expect(answeredWhileBlocked).toBe(true)
    expect(performance.now() - began).toBeGreaterThanOrEqual(timing.blockUntil)
    return outcome
  })

describe("LinkInspector: a busy event loop", () => {
  it.live("a page that answered before the slow threshold is not slow, though the event loop was blocked past it", () =>
    Effect.gen(function*() {
      expectOk(yield* checkWhileBlocked({ answerAfter: 100, blockFrom: 0, blockUntil: 700 }, { slowThreshold: "300 millis" }))
    }))

  it.live("a page that answered before the response timeout is checked, though the event loop was blocked past it", () =>
    Effect.gen(function*() {
      // blocked only once undici's coarse timers (a tick every half second) have had time to start the count
      const timing = { answerAfter: 700, blockFrom: 600, blockUntil: 2_500 }
      expectOk(yield* checkWhileBlocked(timing, { responseTimeout: "1 second" }))
    }))

  it.live("a page that answers after the slow threshold is still slow when the event loop is free", () =>
    Effect.gen(function*() {
      const outcome = yield* inspectWithFreeEventLoop(400, { slowThreshold: "300 millis" })
      expectSingleProblem(outcome, { status: "caution", summary: "Slow page", severity: "warning" })
    }))

  it.live("a page that does not answer within the response timeout is unavailable when the event loop is free", () =>
    Effect.gen(function*() {
      const outcome = yield* inspectWithFreeEventLoop(1000, { responseTimeout: "300 millis" })
      expectSingleProblem(outcome, { status: "broken", summary: "Website unavailable", severity: "error" })
    }))
})
