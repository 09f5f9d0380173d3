import { Command } from "@effect/platform"
import { Effect, Schema, Stream } from "effect"
import { type CaseResult, CaseResultJson, crashedCase, type EnqueueMode, resultLinePrefix } from "./caseResult"
import type { BenchSettings } from "./settings"
import type { BenchSystem } from "./system"

/** The `--case` value naming one case: `<system id>:<enqueue mode>`. */
const caseArgument = (system: BenchSystem, mode: EnqueueMode) => `${system.id}:${mode}`

export const parseCaseArgument = (argument: string) => {
  const separator = argument.lastIndexOf(":")
  return { systemId: argument.slice(0, separator), mode: argument.slice(separator + 1) }
}

/**
 * Runs one case in a child process of the same Node (same loader and conditions), so that
 * each system starts with a clean heap and event loop. Progress goes straight to stderr;
 * the child reports its result as one prefixed JSON line on stdout.
 */
export const runCaseInChild = (entryFile: string, system: BenchSystem, mode: EnqueueMode, settings: BenchSettings) => {
  const crashed = (reason: string): CaseResult => crashedCase(system, mode, settings, reason)
  return Effect.scoped(
    Effect.gen(function* () {
      const child = yield* Command.make(
        process.execPath,
        ...process.execArgv,
        entryFile,
        `--case=${caseArgument(system, mode)}`
      ).pipe(Command.stderr("inherit"), Command.start)
      const [stdout, exitCode] = yield* Effect.all(
        [Stream.mkString(Stream.decodeText(child.stdout)), child.exitCode],
        { concurrency: "unbounded" }
      )
      const lines = stdout.split("\n")
      for (const line of lines) {
        if (line.length > 0 && !line.startsWith(resultLinePrefix)) process.stderr.write(`${line}\n`)
      }
      const resultLine = lines.find((line) => line.startsWith(resultLinePrefix))
      if (resultLine === undefined) return crashed(`child process exited with code ${exitCode} without a result`)
      return yield* Schema.decodeUnknown(CaseResultJson)(resultLine.slice(resultLinePrefix.length))
    })
  ).pipe(Effect.catchAll((error) => Effect.succeed(crashed(String(error)))))
}
