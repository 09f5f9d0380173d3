import { Effect } from "effect"

/**
 * A count option set in code (a concurrency, a prefetch): rounded down and raised to `least`. A value that is not a
 * finite number is a defect naming `owner` and the option.
 */
export const countOption = (owner: string, name: string, value: number, least: number): Effect.Effect<number> =>
  Number.isFinite(value)
    ? Effect.succeed(Math.max(least, Math.floor(value)))
    : Effect.dieMessage(`${owner}: ${name} must be a finite number (got ${value})`)
