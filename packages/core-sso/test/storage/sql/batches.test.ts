import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { makeBatches } from "../../../src/storage/sql/batches"

/** Until the next turn of the event loop, when the batches waiting for it have started. */
const nextTurn = Effect.async<void>((resume) => {
  setImmediate(() => resume(Effect.void))
})

describe("makeBatches", () => {
  it.scoped("runs a request in the next turn when idle, and those that arrive meanwhile together, each key once at a time", () =>
    Effect.gen(function*() {
      const release = yield* Deferred.make<void>()
      const runs: Array<ReadonlyArray<string>> = []
      const run = yield* makeBatches({
        maxRunning: 1,
        maxSize: 10,
        keyOf: (input: string) => input.split("#")[0]!,
        run: (inputs: ReadonlyArray<string>) =>
          Effect.as(
            Effect.zipRight(Effect.sync(() => runs.push(inputs)), runs.length === 0 ? Deferred.await(release) : Effect.void),
            inputs.map((input) => input.toUpperCase())
          )
      })
      const first = yield* Effect.fork(run("a"))
      while (runs.length === 0) yield* nextTurn
      const others = yield* Effect.fork(Effect.all([run("b"), run("a#again"), run("c")], { concurrency: "unbounded" }))
      const givenUp = yield* Effect.fork(run("d"))
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(givenUp)
      yield* Deferred.succeed(release, undefined)
      expect(yield* Fiber.join(first)).toBe("A")
      expect(yield* Fiber.join(others)).toEqual(["B", "A#AGAIN", "C"])
      // "a#again" waited for "a"'s batch; "d" was given up before any batch took it
      expect(runs[0]).toEqual(["a"])
      expect(runs.flat().sort()).toEqual(["a", "a#again", "b", "c"])
      expect(runs.slice(1).some((batch) => batch.length > 1)).toBe(true)
    }))

  it.scoped("requests that arrive in one turn share a batch, even when the store answers without waiting", () =>
    Effect.gen(function*() {
      const runs: Array<ReadonlyArray<number>> = []
      const run = yield* makeBatches({
        maxRunning: 2,
        maxSize: 10,
        keyOf: (input: number) => String(input),
        run: (inputs: ReadonlyArray<number>) => Effect.sync(() => runs.push(inputs)).pipe(Effect.as(inputs))
      })
      expect(yield* Effect.all([run(1), run(2), run(3)], { concurrency: "unbounded" })).toEqual([1, 2, 3])
      expect(runs).toEqual([[1, 2, 3]])
    }))

  it.scoped("a failed batch fails each of its requests", () =>
    Effect.gen(function*() {
      const run = yield* makeBatches({
        maxRunning: 2,
        maxSize: 10,
        keyOf: (input: number) => String(input),
        run: (inputs: ReadonlyArray<number>) => inputs.includes(3) ? Effect.fail("broken" as const) : Effect.succeed(inputs)
      })
      expect(yield* run(1)).toBe(1)
      expect(yield* Effect.flip(run(3))).toBe("broken")
    }))
})
