/**
 * Link checking bench: `npm run bench:linkcheck` (see bench/README.md). A fleet of loopback hosts in a child
 * process serves seeded plans of links; the reference server checks them on PostgreSQL and on PGlite: one batch at
 * its polite defaults (run 1), one batch beside linkinator at linkinator's own peaks in flight (run 2), and many
 * batches posted at once at the defaults (run 3). Runs 1 and 2 repeat in rounds (`--rounds`), each system a fresh
 * process in each, and report the medians. Progress goes to stderr, the markdown report to stdout, each run's table
 * as soon as the run is over.
 */
import { FetchHttpClient } from "@effect/platform"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Console, Effect, Either, Layer, Option, Redacted, Schema } from "effect"
import { availableParallelism } from "node:os"
import { parseArgs } from "node:util"
import { civicstackIdentity, type CivicstackRunInput, runCivicstack } from "./linkcheck/civicstackRun"
import { startFleet } from "./linkcheck/fleet"
import { runLinkinator } from "./linkcheck/linkinatorRun"
import { type Limits, linkUri, makeGrowthPlan, makeLinkPlan, type PlannedLink } from "./linkcheck/linkPlan"
import { startReceiver } from "./linkcheck/receiver"
import { limitsLabel, renderFooter, renderHeader, renderRun } from "./linkcheck/report"
import type { Backend, RunNumber, RunResult } from "./linkcheck/runResult"
import {
  defaultLimits,
  linkinatorOptions,
  loadSettings,
  Rounds,
  RunNumber as RunOption,
  Subject
} from "./linkcheck/settings"

const { values: options } = parseArgs({
  options: { only: { type: "string" }, runs: { type: "string" }, rounds: { type: "string", default: "3" } },
  strict: true
})

const listOption = (text: string | undefined) =>
  text?.split(",").map((item) => item.trim()).filter((item) => item.length > 0)

const selectedSubjects = Schema.decodeUnknown(Schema.Array(Subject))(listOption(options.only) ?? ["pg", "pglite", "linkinator"])
const selectedRuns = Schema.decodeUnknown(Schema.Array(RunOption))(listOption(options.runs) ?? ["1", "2", "3"])
const selectedRounds = Schema.decodeUnknown(Rounds)(options.rounds)

/** The server's version, or why it cannot be reached. */
const postgresVersion = (serverUrl: string): Effect.Effect<Either.Either<string, string>> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ server_version: string }>`SHOW server_version`).pipe(
    Effect.map((rows) => rows[0]?.server_version ?? "unknown"),
    Effect.provide(PgClient.layer({ url: Redacted.make(serverUrl), maxConnections: 1 })),
    Effect.timeout("10 seconds"),
    Effect.either,
    Effect.map(Either.mapLeft(() => `unreachable at ${serverUrl}`))
  )

const backends: ReadonlyArray<readonly [Backend, "pg" | "pglite"]> = [["PostgreSQL", "pg"], ["PGlite", "pglite"]]
/** Our backends in a round's order: PostgreSQL first in odd rounds, PGlite first in even ones. */
const backendsOfRound = (round: number) => (round % 2 === 1 ? backends : [...backends].reverse())

const program = Effect.gen(function*() {
  const settings = yield* loadSettings
  const subjects = new Set(yield* selectedSubjects)
  const runs = new Set((yield* selectedRuns).map(Number) as ReadonlyArray<RunNumber>)
  const rounds = yield* selectedRounds
  const links = yield* makeLinkPlan(settings.links)
  const growth = runs.has(3) ? yield* makeGrowthPlan(settings.growth) : []
  const postgres = yield* postgresVersion(settings.databaseUrl)
  const fleet = yield* startFleet(links.length, runs.has(3) ? settings.growth : undefined)
  const receiver = yield* startReceiver(links.map((link) => linkUri(link, fleet.port)))
  const environment = { node: process.version, cpus: availableParallelism(), postgres: Either.merge(postgres) }
  yield* Console.log(renderHeader(links, growth, settings.growth, environment, rounds))

  const results: Array<RunResult> = []
  const roundNumbers = Array.from({ length: rounds }, (_, index) => index + 1)
  const progress = (run: RunNumber, round: number, what: string) =>
    Console.error(`--- run ${run}${run === 3 ? "" : `, round ${round}/${rounds}`}: ${what}`)
  /** Ours on each selected backend (in the round's order), or skipped on PostgreSQL when it cannot be reached. */
  const civicstackRows = (
    run: RunNumber,
    round: number,
    limits: Limits,
    batches: ReadonlyArray<ReadonlyArray<PlannedLink>>,
    only: Backend | undefined = undefined
  ) =>
    Effect.gen(function*() {
      const rows: Array<RunResult> = []
      for (const [backend, subject] of backendsOfRound(round)) {
        if (!subjects.has(subject) || (only !== undefined && backend !== only)) continue
        const input: CivicstackRunInput = { run, round, backend, limits, batches, fleet, receiver, databaseUrl: settings.databaseUrl }
        yield* progress(run, round, `civicstack on ${backend}, ${batches.length} batch(es), limits ${limitsLabel(limits)}`)
        rows.push(
          Either.isLeft(postgres) && backend === "PostgreSQL"
            ? { ...civicstackIdentity(input), _tag: "Skipped", reason: `PostgreSQL ${postgres.left}` }
            : yield* runCivicstack(input)
        )
      }
      return rows
    })
  const report = (run: RunNumber, rows: ReadonlyArray<RunResult>, backend?: Backend) =>
    Effect.gen(function*() {
      results.push(...rows)
      yield* Console.log(renderRun(run, rows, backend))
    })

  /** One round of run 2: linkinator, then ours at its peaks in flight (or at `BENCH_EQUAL_LIMITS`). */
  const run2Round = (round: number) =>
    Effect.gen(function*() {
      const rows: Array<RunResult> = []
      if (subjects.has("linkinator")) {
        yield* progress(2, round, `linkinator, concurrency ${linkinatorOptions.concurrency}`)
        rows.push(yield* runLinkinator({ ...linkinatorOptions, round, links, fleet, receiver }))
      }
      const linkinator = rows[0]
      const limits = Option.orElse(
        settings.equalLimits,
        () =>
          linkinator?._tag === "Measured"
            ? Option.some<Limits>({
              global: Math.max(1, linkinator.fleet.peakInFlight),
              perHost: Math.max(1, ...linkinator.fleet.peakPerHost)
            })
            : Option.none()
      )
      if (Option.isSome(limits)) return [...rows, ...(yield* civicstackRows(2, round, limits.value, [links]))]
      for (const [backend, subject] of backendsOfRound(round)) {
        if (!subjects.has(subject)) continue
        const identity = civicstackIdentity({ run: 2, round, backend, limits: defaultLimits, batches: [links] })
        rows.push({ ...identity, _tag: "Skipped", reason: "no linkinator peaks to run at (run linkinator or set BENCH_EQUAL_LIMITS)" })
      }
      return rows
    })

  if (runs.has(1)) {
    yield* report(1, (yield* Effect.forEach(roundNumbers, (round) => civicstackRows(1, round, defaultLimits, [links]))).flat())
  }
  if (runs.has(2)) yield* report(2, (yield* Effect.forEach(roundNumbers, run2Round)).flat())

  // one table per backend, each printed once its two rows are done
  if (runs.has(3)) {
    for (const [backend] of backends) {
      const rows: Array<RunResult> = []
      rows.push(...(yield* civicstackRows(3, 1, defaultLimits, growth.slice(0, 1), backend)))
      if (growth.length > 1) rows.push(...(yield* civicstackRows(3, 1, defaultLimits, growth, backend)))
      if (rows.length > 0) yield* report(3, rows, backend)
    }
  }

  yield* Console.log(renderFooter(results))
})

NodeRuntime.runMain(
  Effect.scoped(program).pipe(Effect.provide(Layer.merge(NodeContext.layer, FetchHttpClient.layer)))
)
