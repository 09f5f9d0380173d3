import { Options } from "@effect/cli"
import { Console, Layer, Logger, LogLevel } from "effect"

/** stdout carries the answer alone (for --json); warnings and errors are logged to stderr. */
export const quietLogsOnStderr = Layer.merge(
  Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.logfmtLogger)),
  Logger.minimumLogLevel(LogLevel.Warning)
)

export const json = Options.boolean("json").pipe(Options.withDescription("print the answer as JSON"))

/** The answer as JSON, or as lines for a person. */
export const print = (asJson: boolean, value: unknown, lines: ReadonlyArray<string>) =>
  asJson ? Console.log(JSON.stringify(value, null, 2)) : Console.log(lines.join("\n"))
