import { makeLinkcheckClient, parseWebhook, verifyWebhookSignature } from "@civicstack/sdk-linkcheck"
import type { BatchReport } from "@civicstack/sdk-linkcheck"
import { type CommandExecutor, FileSystem, type HttpClient } from "@effect/platform"
import { Clock, Deferred, Effect, Either } from "effect"
import { BenchError, failWith } from "../benchError"
import { freshDatabase } from "../freshDatabase"
import { type BackendsCpu, backendsCpu, backendsCpuSince } from "./databaseCpu"
import type { Fleet } from "./fleet"
import type { FleetStats } from "./fleetProtocol"
import { hopCount, type Limits, linkUri, lowerBoundMs, type PlannedLink } from "./linkPlan"
import { observe } from "./observe"
import { peakRssBytes, processCpuMs, resetPeakRss, rssBytes } from "./procfs"
import type { Receiver } from "./receiver"
import { type ServerDatabase, startReferenceServer } from "./referenceServer"
import { type Backend, notMeasured, type RunIdentity, type RunResult } from "./runResult"

export interface CivicstackRunInput {
  readonly run: 1 | 2
  readonly backend: Backend
  readonly limits: Limits
  readonly links: ReadonlyArray<PlannedLink>
  readonly fleet: Fleet
  readonly receiver: Receiver
  /** The PostgreSQL server on which the run gets a fresh database. */
  readonly databaseUrl: string
}

/** A batch that takes longer than this is given up. */
const WEBHOOK_TIMEOUT = "10 minutes"

const serverDatabase = (backend: Backend, databaseUrl: string) =>
  backend === "PostgreSQL"
    ? Effect.map(freshDatabase(databaseUrl, "linkcheck"), (database): ServerDatabase => ({ _tag: "Postgres", url: database.url }))
    : Effect.flatMap(FileSystem.FileSystem, (fs) => fs.makeTempDirectoryScoped({ prefix: "bench-linkcheck-" })).pipe(
      Effect.map((dataDir): ServerDatabase => ({ _tag: "Pglite", dataDir })),
      Effect.mapError(failWith("cannot create a data directory for PGlite"))
    )

/** The links whose status is not the planned one (broken for a 404, ok for the others), by status and problem. */
const unplannedStatuses = (input: CivicstackRunInput, report: BatchReport): string | undefined => {
  const plannedByUri = new Map(input.links.map((link) => [linkUri(link, input.fleet.port), link.kind]))
  const unplanned = new Map<string, number>()
  for (const link of report.links) {
    const planned = plannedByUri.get(link.uri) === "notFound" ? "broken" : "ok"
    if (link.status === planned) continue
    const key = `${link.status} (${link.problem_summary ?? "no problem"})`
    unplanned.set(key, (unplanned.get(key) ?? 0) + 1)
  }
  if (unplanned.size === 0) return undefined
  return `not as planned: ${Array.from(unplanned, ([key, count]) => `${count} ${key}`).join(", ")}`
}

/** Every way the completed batch and the fleet's counts can differ from the plan. */
const problemsOf = (
  input: CivicstackRunInput,
  batchId: number,
  report: BatchReport,
  signatureValid: boolean,
  fleet: FleetStats
): ReadonlyArray<string> => {
  const links = input.links.length
  const { totals } = report
  const peak = Math.max(0, ...fleet.peakPerHost)
  const expectedRequests = hopCount(input.links)
  return [
    signatureValid ? undefined : "webhook signature invalid",
    report.id === batchId ? undefined : `webhook for batch ${report.id}, not ${batchId}`,
    report.status === "completed" && totals.pending === 0 ? undefined : `webhook with ${totals.pending} pending`,
    totals.links === links ? undefined : `${totals.links} links in the webhook, not ${links}`,
    unplannedStatuses(input, report),
    peak <= input.limits.perHost ? undefined : `${peak} requests at once on one host, limit ${input.limits.perHost}`,
    fleet.peakInFlight <= input.limits.global
      ? undefined
      : `${fleet.peakInFlight} requests at once on all hosts, limit ${input.limits.global}`,
    fleet.unexpected === 0 ? undefined : `${fleet.unexpected} requests for unknown paths`,
    fleet.requests === expectedRequests ? undefined : `fleet received ${fleet.requests} requests, not ${expectedRequests}`
  ].filter((problem) => problem !== undefined)
}

const sinceOrNull = (from: number | null, to: number | null) => (from === null || to === null ? null : to - from)

const measure = (input: CivicstackRunInput, identity: RunIdentity) =>
  Effect.gen(function*() {
    const database = yield* serverDatabase(input.backend, input.databaseUrl)
    const server = yield* startReferenceServer(database, input.limits)
    const label = `run ${input.run}, civicstack on ${input.backend}`
    const webhook = yield* input.receiver.expectWebhook(`run-${input.run}-${input.backend}`)
    const secret = crypto.randomUUID()
    const client = yield* makeLinkcheckClient({ baseUrl: server.url, bearerToken: server.token })
    const uris = input.links.map((link) => linkUri(link, input.fleet.port))
    const databaseCpu = database._tag === "Postgres"
      ? backendsCpu(database.url, input.databaseUrl)
      : Effect.succeed<BackendsCpu>(new Map())
    const databaseCpuBefore = yield* databaseCpu
    const cpuBefore = yield* processCpuMs(server.pid)
    const startupPeakRss = yield* peakRssBytes(server.pid)
    const startRss = yield* rssBytes(server.pid)
    yield* resetPeakRss(server.pid)

    const { observed, value } = yield* observe(
      label,
      input.fleet,
      hopCount(input.links),
      Effect.gen(function*() {
        const startedAt = yield* Clock.currentTimeMillis
        const created = yield* client.createBatch(uris, {
          checkedWithin: 0,
          priority: "high",
          webhookUri: webhook.url,
          webhookSecretToken: secret
        }).pipe(Effect.mapError(failWith("POST /batch failed")))
        const submittedAt = yield* Clock.currentTimeMillis
        const arrived = yield* Effect.raceFirst(Deferred.await(webhook.arrival), server.exited).pipe(
          Effect.timeoutFail({
            duration: WEBHOOK_TIMEOUT,
            onTimeout: () => new BenchError({ message: `no webhook within ${WEBHOOK_TIMEOUT}` })
          })
        )
        return { created, startedAt, submittedAt, arrived }
      })
    )
    const cpuMs = (yield* processCpuMs(server.pid)) - cpuBefore
    const databaseCpuMs = database._tag === "Postgres" ? backendsCpuSince(databaseCpuBefore, yield* databaseCpu) : null
    const runPeakRss = yield* peakRssBytes(server.pid)
    const report = yield* Either.match(parseWebhook(value.arrived.body), {
      onLeft: (error) => Effect.fail(new BenchError({ message: error.message })),
      onRight: Effect.succeed
    })
    const signatureValid = verifyWebhookSignature(value.arrived.body, value.arrived.signature, secret)
    return {
      ...identity,
      ...observed,
      _tag: "Measured" as const,
      links: input.links.length,
      wallMs: value.arrived.arrivedAt - value.startedAt,
      submitMs: value.submittedAt - value.startedAt,
      toFirstRequestMs: sinceOrNull(value.startedAt, observed.fleet.firstRequestAt),
      lastResponseToWebhookMs: sinceOrNull(observed.fleet.lastResponseAt, value.arrived.arrivedAt),
      peakRssBytes: Math.max(startupPeakRss, runPeakRss),
      startRssBytes: startRss,
      runPeakRssBytes: runPeakRss,
      cpuMs,
      databaseCpuMs,
      problems: problemsOf(input, value.created.id, report, signatureValid, observed.fleet)
    }
  })

/**
 * One run of the reference server: started in a child process on a fresh database with the run's limits, it gets
 * one POST /batch of every link (priority high, checked_within 0, a webhook to the receiver). Wall time is from the
 * POST to the webhook's arrival. Anything that stops the run is reported as not measured.
 */
export const runCivicstack = (
  input: CivicstackRunInput
): Effect.Effect<
  RunResult,
  never,
  FileSystem.FileSystem | CommandExecutor.CommandExecutor | HttpClient.HttpClient
> => {
  const identity: RunIdentity = {
    run: input.run,
    system: "civicstack",
    backend: input.backend,
    limits: input.limits,
    lowerBoundMs: lowerBoundMs(input.links, input.limits)
  }
  return Effect.scoped(measure(input, identity)).pipe(Effect.catchAllCause((cause) => notMeasured(identity, cause)))
}
