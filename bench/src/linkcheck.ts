/**
 * Link checking bench: `npm run bench:linkcheck` (see bench/README.md). A fleet of loopback hosts in a child
 * process serves a seeded mix of links; the reference server checks them all in one batch, on PostgreSQL and on
 * PGlite, under its default limits (run 1) and higher ones beside linkinator (run 2). Progress goes to stderr,
 * the markdown report to stdout.
 */
import { FetchHttpClient } from "@effect/platform"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Console, Effect, Either, Layer, Redacted, Schema } from "effect"
import { availableParallelism } from "node:os"
import { parseArgs } from "node:util"
import { runCivicstack } from "./linkcheck/civicstackRun"
import { startFleet } from "./linkcheck/fleet"
import { runLinkinator } from "./linkcheck/linkinatorRun"
import { linkUri, lowerBoundMs, makeLinkPlan } from "./linkcheck/linkPlan"
import { startReceiver } from "./linkcheck/receiver"
import { renderReport } from "./linkcheck/report"
import type { Backend, RunResult } from "./linkcheck/runResult"
import { linkinatorOptions, loadSettings, runLimits, Subject } from "./linkcheck/settings"

const { values: options } = parseArgs({ options: { only: { type: "string" } }, strict: true })

const selectedSubjects = Schema.decodeUnknown(Schema.Array(Subject))(
  options.only?.split(",").map((item) => item.trim()).filter((item) => item.length > 0) ??
    ["pg", "pglite", "linkinator"]
)

/** The server's version, or why it cannot be reached. */
const postgresVersion = (serverUrl: string): Effect.Effect<Either.Either<string, string>> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ server_version: string }>`SHOW server_version`).pipe(
    Effect.map((rows) => rows[0]?.server_version ?? "unknown"),
    Effect.provide(PgClient.layer({ url: Redacted.make(serverUrl), maxConnections: 1 })),
    Effect.timeout("10 seconds"),
    Effect.either,
    Effect.map(Either.mapLeft(() => `unreachable at ${serverUrl}`))
  )

const backends: ReadonlyArray<readonly [Backend, Subject]> = [["PostgreSQL", "pg"], ["PGlite", "pglite"]]

const program = Effect.gen(function*() {
  const settings = yield* loadSettings
  const subjects = new Set(yield* selectedSubjects)
  const links = yield* makeLinkPlan(settings.links)
  const postgres = yield* postgresVersion(settings.databaseUrl)
  const fleet = yield* startFleet(links.length)
  const receiver = yield* startReceiver(links.map((link) => linkUri(link, fleet.port)))

  const results: Array<RunResult> = []
  for (const run of [1, 2] as const) {
    const limits = runLimits[run]
    for (const [backend, subject] of backends) {
      if (!subjects.has(subject)) continue
      yield* Console.error(`--- run ${run}: civicstack on ${backend}, limits ${limits.global} / ${limits.perHost}`)
      results.push(
        Either.isLeft(postgres) && backend === "PostgreSQL"
          ? {
            _tag: "Skipped",
            run,
            system: "civicstack",
            backend,
            limits,
            lowerBoundMs: lowerBoundMs(links, limits),
            reason: `PostgreSQL ${postgres.left}`
          }
          : yield* runCivicstack({ run, backend, limits, links, fleet, receiver, databaseUrl: settings.databaseUrl })
      )
    }
    if (run === 2 && subjects.has("linkinator")) {
      yield* Console.error(`--- run 2: linkinator, concurrency ${linkinatorOptions.concurrency}`)
      results.push(yield* runLinkinator({ ...linkinatorOptions, links, fleet, receiver }))
    }
  }

  const environment = {
    node: process.version,
    cpus: availableParallelism(),
    postgres: Either.merge(postgres)
  }
  yield* Console.log(renderReport(results, links, environment))
})

NodeRuntime.runMain(
  Effect.scoped(program).pipe(Effect.provide(Layer.merge(NodeContext.layer, FetchHttpClient.layer)))
)
