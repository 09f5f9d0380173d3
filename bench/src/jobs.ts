/**
 * Job queue throughput bench: `npm run bench` (see bench/README.md).
 * Without `--case` this process is the conductor: it runs each case in a child process,
 * one after another, and prints the markdown report on stdout. With `--case=<id>:<mode>`
 * it is such a child.
 */
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Cause, Console, Effect, Exit, Redacted, Schema } from "effect"
import { availableParallelism } from "node:os"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { BenchError } from "./benchError"
import { type CaseResult, CaseResultJson, crashedCase, EnqueueMode, resultLinePrefix } from "./caseResult"
import { parseCaseArgument, runCaseInChild } from "./childProcess"
import { renderReport } from "./report"
import { runCase } from "./runCase"
import { type BenchSettings, loadSettings } from "./settings"
import type { BenchSystem } from "./system"
import { allSystems } from "./systems/index"

const entryFile = fileURLToPath(import.meta.url)

const { values: options } = parseArgs({
  options: {
    only: { type: "string" },
    enqueue: { type: "string" },
    case: { type: "string" }
  },
  strict: true
})

const listOption = (value: string | undefined): ReadonlyArray<string> | undefined =>
  value?.split(",").map((item) => item.trim()).filter((item) => item.length > 0)

const systemById = (id: string) =>
  Effect.fromNullable(allSystems.find((system) => system.id === id)).pipe(
    Effect.orElseFail(() =>
      new BenchError({
        message: `unknown system "${id}"; known: ${allSystems.map((system) => system.id).join(", ")}`
      })
    )
  )

const decodeModes = Schema.decodeUnknown(Schema.Array(EnqueueMode))

const selectedSystems = Effect.forEach(listOption(options.only) ?? allSystems.map((system) => system.id), systemById)
const selectedModes = decodeModes(listOption(options.enqueue) ?? ["single", "bulk"])

const serverVersion = (serverUrl: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ server_version: string }>`SHOW server_version`).pipe(
    Effect.map((rows) => rows[0]?.server_version ?? "unknown"),
    Effect.provide(PgClient.layer({ url: Redacted.make(serverUrl), maxConnections: 1 })),
    Effect.orElseSucceed(() => `unreachable at ${serverUrl}`)
  )

const conduct = (settings: BenchSettings) =>
  Effect.gen(function* () {
    const systems = yield* selectedSystems
    const modes = yield* selectedModes
    const cases = systems.flatMap((system) =>
      modes
        .filter((mode) => mode === "single" || system.hasBulkInsert)
        .map((mode) => [system, mode] as const)
    )
    const results: Array<CaseResult> = []
    for (const [system, mode] of cases) {
      yield* Console.error(`--- ${system.label}, enqueue ${mode}`)
      results.push(yield* runCaseInChild(entryFile, system, mode, settings))
    }
    const environment = {
      node: process.version,
      cpus: availableParallelism(),
      postgres: yield* serverVersion(settings.databaseUrl)
    }
    yield* Console.log(renderReport(results, settings, environment))
  })

const runAsChild = (caseArgument: string, settings: BenchSettings) =>
  Effect.gen(function* () {
    const { mode, systemId } = parseCaseArgument(caseArgument)
    const system: BenchSystem = yield* systemById(systemId)
    const enqueueMode = yield* Schema.decodeUnknown(EnqueueMode)(mode)
    const result = yield* runCase(system, enqueueMode, settings).pipe(
      Effect.catchAllCause((cause) => Effect.succeed(crashedCase(system, enqueueMode, settings, Cause.pretty(cause))))
    )
    yield* Console.log(`${resultLinePrefix}${yield* Schema.encode(CaseResultJson)(result)}`)
  })

const childCase = options.case

if (childCase === undefined) {
  NodeRuntime.runMain(Effect.flatMap(loadSettings, conduct).pipe(Effect.provide(NodeContext.layer)))
} else {
  NodeRuntime.runMain(Effect.flatMap(loadSettings, (settings) => runAsChild(childCase, settings)), {
    // A peer library may leave timers behind; the child is done once its result is written.
    teardown: (exit) => process.exit(Exit.isSuccess(exit) ? 0 : 1)
  })
}
