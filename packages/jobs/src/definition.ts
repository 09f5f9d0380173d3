import { Duration, Schema } from "effect"

/** A kind of job: the queue it runs on, the schema of its payload and how it is retried. */
export interface JobDefinition<A, I> {
  readonly queue: string
  readonly payload: Schema.Schema<A, I>
  readonly maxAttempts: number
  readonly backoff: { readonly base: Duration.Duration; readonly max: Duration.Duration }
  readonly leaseDuration: Duration.Duration
}

export interface JobDefinitionOptions<A, I> {
  readonly queue: string
  readonly payload: Schema.Schema<A, I>
  /** Attempts before the job is kept as dead (default 10). */
  readonly maxAttempts?: number
  /** Retry delay: min(max, base * 2^(attempt - 1)) plus up to 20% jitter (defaults: base 1 second, max 1 hour). */
  readonly backoff?: { readonly base?: Duration.DurationInput; readonly max?: Duration.DurationInput }
  /** How long a claim is valid without a heartbeat from its worker (default 30 seconds). */
  readonly leaseDuration?: Duration.DurationInput
}

const assertPositiveInteger = (value: number, what: string): number => {
  if (!Number.isInteger(value) || value < 1) {
    throw new RangeError(`${what} must be a positive integer, got ${value}`)
  }
  return value
}

const assertPositiveDuration = (value: Duration.DurationInput, what: string): Duration.Duration => {
  const duration = Duration.decode(value)
  if (Duration.toMillis(duration) <= 0) {
    throw new RangeError(`${what} must be longer than zero, got ${Duration.format(duration)}`)
  }
  return duration
}

export const JobDefinition = {
  /** Throws a RangeError for a definition that cannot work (e.g. maxAttempts 0): definitions are static configuration. */
  make: <A, I>(options: JobDefinitionOptions<A, I>): JobDefinition<A, I> => {
    if (options.queue.length === 0) throw new RangeError("queue must not be empty")
    return {
      queue: options.queue,
      payload: options.payload,
      maxAttempts: assertPositiveInteger(options.maxAttempts ?? 10, "maxAttempts"),
      backoff: {
        base: assertPositiveDuration(options.backoff?.base ?? "1 second", "backoff.base"),
        max: assertPositiveDuration(options.backoff?.max ?? "1 hour", "backoff.max")
      },
      leaseDuration: assertPositiveDuration(options.leaseDuration ?? "30 seconds", "leaseDuration")
    }
  }
}

/** The delay before attempt `failedAttempt + 1`, given a random number in [0, 1). */
export const retryDelay = (
  backoff: JobDefinition<unknown, unknown>["backoff"],
  failedAttempt: number,
  random: number
): Duration.Duration => {
  const exponential = Duration.toMillis(backoff.base) * 2 ** (failedAttempt - 1)
  const jittered = exponential * (1 + 0.2 * random)
  return Duration.millis(Math.min(Duration.toMillis(backoff.max), jittered))
}
