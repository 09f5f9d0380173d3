import type { CommandExecutor } from "@effect/platform"
import { Deferred, Duration, Effect, Fiber, Option, type Scope, Stream } from "effect"
import { BenchError } from "../benchError"

const RECENT_LINES = 40

export interface ChildOutput {
  /** The first stdout line that started with `prefix` (one of those given to `followOutput`), without the prefix. */
  readonly line: (prefix: string) => Effect.Effect<string>
  /** Fails once the child has exited and all its output is read, with its exit code and last lines. */
  readonly exited: Effect.Effect<never, BenchError>
}

/**
 * Reads a child's stdout and stderr for as long as the scope is open, so that it never blocks on a full pipe.
 * Each line goes to this process's stderr behind `[label]`, except the first stdout line starting with each of
 * `capturePrefixes`, which is handed over through `line`.
 */
export const followOutput = (
  child: CommandExecutor.Process,
  label: string,
  capturePrefixes: ReadonlyArray<string> = []
): Effect.Effect<ChildOutput, never, Scope.Scope> =>
  Effect.gen(function*() {
    const captures = new Map<string, Deferred.Deferred<string>>()
    for (const prefix of capturePrefixes) captures.set(prefix, yield* Deferred.make<string>())
    const recent: Array<string> = []
    const lines = (stream: Stream.Stream<Uint8Array, unknown>) => stream.pipe(Stream.decodeText(), Stream.splitLines)

    const forward = (line: string) =>
      Effect.sync(() => {
        recent.push(line)
        if (recent.length > RECENT_LINES) recent.shift()
        process.stderr.write(`[${label}] ${line}\n`)
      })

    const onStdoutLine = (line: string) => {
      const prefix = capturePrefixes.find((candidate) => line.startsWith(candidate))
      const capture = prefix === undefined ? undefined : captures.get(prefix)
      if (prefix === undefined || capture === undefined) return forward(line)
      return Effect.flatMap(Deferred.succeed(capture, line.slice(prefix.length)), (first) => first ? Effect.void : forward(line))
    }

    const stdout = yield* Effect.forkScoped(Stream.runForEach(lines(child.stdout), onStdoutLine).pipe(Effect.ignore))
    const stderr = yield* Effect.forkScoped(Stream.runForEach(lines(child.stderr), forward).pipe(Effect.ignore))

    const exited = Effect.gen(function*() {
      const exitCode = yield* Effect.option(child.exitCode)
      yield* Fiber.join(Fiber.zip(stdout, stderr))
      const code = Option.match(exitCode, { onNone: () => "a signal", onSome: (code) => `code ${code}` })
      return yield* new BenchError({ message: `${label} exited with ${code}; its last output:\n${recent.join("\n")}` })
    })

    return {
      line: (prefix) => Effect.suspend(() => {
        const capture = captures.get(prefix)
        return capture === undefined ? Effect.dieMessage(`the output of ${label} is not watched for ${prefix}`) : Deferred.await(capture)
      }),
      exited
    }
  })

/** `wait`'s result, unless the child exits first or `timeout` passes. */
export const unlessExited = <A, E, R>(
  output: ChildOutput,
  wait: Effect.Effect<A, E, R>,
  what: string,
  timeout: Duration.DurationInput
): Effect.Effect<A, E | BenchError, R> =>
  Effect.raceFirst(wait, output.exited).pipe(
    Effect.timeoutFail({
      duration: timeout,
      onTimeout: () => new BenchError({ message: `no ${what} within ${Duration.format(timeout)}` })
    })
  )
