import { Clock, Duration, Effect, Layer, TestClock } from "effect"
import type { DeliveryFailure, OutgoingEmail } from "../../src/delivery/EmailProvider"
import { EmailProvider } from "../../src/delivery/EmailProvider"

export interface Attempt {
  readonly email: OutgoingEmail
  /** Clock time of the attempt. */
  readonly at: number
  readonly outcome: "delivered" | "hung" | DeliveryFailure["_tag"]
}

/**
 * A provider double: it delivers everything except what `script` says for an address (each entry used once, in order:
 * a failure, "hang" to never answer, or "slow" to deliver after 5 seconds of the clock), and records every attempt
 * with its clock time (a slow one when it is delivered).
 */
export const makeScriptedProvider = (script: Record<string, ReadonlyArray<DeliveryFailure | "hang" | "slow">> = {}) => {
  const attempts: Array<Attempt> = []
  let started = 0
  const remaining = new Map(Object.entries(script).map(([address, steps]) => [address, [...steps]]))
  const send = (email: OutgoingEmail) =>
    Effect.flatMap(Clock.currentTimeMillis, (at): Effect.Effect<void, DeliveryFailure> => {
      started += 1
      const step = remaining.get(email.address)?.shift()
      if (step === "slow") {
        return Effect.flatMap(Effect.zipRight(Effect.sleep("5 seconds"), Clock.currentTimeMillis), (deliveredAt) =>
          Effect.sync(() => void attempts.push({ email, at: deliveredAt, outcome: "delivered" })))
      }
      if (step === undefined) {
        attempts.push({ email, at, outcome: "delivered" })
        return Effect.void
      }
      if (step === "hang") {
        attempts.push({ email, at, outcome: "hung" })
        return Effect.never
      }
      attempts.push({ email, at, outcome: step._tag })
      return Effect.fail(step)
    })
  return {
    attempts,
    /** Sends begun, finished or not. */
    started: () => started,
    delivered: () => attempts.filter((attempt) => attempt.outcome === "delivered"),
    layer: Layer.succeed(EmailProvider, { name: "scripted", send })
  }
}

/** Lets fibers waiting on real I/O (PGlite, the job queue) run; the test clock does not move. */
export const letWorkRun = Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 1)))

/** Waits, without moving the clock, until `check` holds (failing the test after about two seconds of real time). */
export const waitFor = (what: string, check: () => boolean) =>
  Effect.gen(function*() {
    for (let tries = 0; tries < 2000; tries++) {
      if (check()) return
      yield* letWorkRun
    }
    return yield* Effect.dieMessage(`gave up waiting: ${what}`)
  })

/** Moves the clock `step` at a time, letting work run in between, until `check` holds (at most `maxSteps`). */
export const advanceUntil = (what: string, check: () => boolean, step: Duration.DurationInput, maxSteps = 500) =>
  Effect.gen(function*() {
    for (let steps = 0; steps < maxSteps; steps++) {
      for (let turns = 0; turns < 5; turns++) {
        if (check()) return
        yield* letWorkRun
      }
      yield* TestClock.adjust(step)
    }
    return yield* Effect.dieMessage(`gave up waiting: ${what}`)
  })

/** `waitFor` with an effectful check. */
export const waitForEffect = <E, R>(what: string, check: Effect.Effect<boolean, E, R>) =>
  Effect.gen(function*() {
    for (let tries = 0; tries < 2000; tries++) {
      if (yield* check) return
      yield* letWorkRun
    }
    return yield* Effect.dieMessage(`gave up waiting: ${what}`)
  })

/** Moves the clock by `total`, `step` at a time, letting work run in between. */
export const advanceBy = (total: Duration.DurationInput, step: Duration.DurationInput) =>
  Effect.gen(function*() {
    const steps = Math.ceil(Duration.toMillis(total) / Duration.toMillis(step))
    for (let done = 0; done < steps; done++) {
      yield* TestClock.adjust(step)
      for (let turns = 0; turns < 5; turns++) yield* letWorkRun
    }
  })
