import { makeLinkcheckClient, parseWebhook, verifyWebhookSignature } from "@civicstack/sdk-linkcheck"
import type { BatchReport, LinkcheckClientService } from "@civicstack/sdk-linkcheck"
import { type CommandExecutor, FileSystem, type HttpClient } from "@effect/platform"
import { Clock, Console, Deferred, Effect, Either, Schedule } from "effect"
import { BenchError, failWith } from "../benchError"
import { freshDatabase } from "../freshDatabase"
import { namedThreadsCpuSeconds } from "../procCpu"
import { type BackendsCpu, backendsCpu, backendsCpuSince } from "./databaseCpu"
import type { Fleet } from "./fleet"
import type { FleetStats } from "./fleetProtocol"
import { hopCount, inOrderIdealMs, type Limits, linkUri, lowerBoundMs, type PlannedLink, plannedLatencyMs } from "./linkPlan"
import { observe } from "./observe"
import { peakRssBytes, processCpuMs, resetPeakRss, rssBytes } from "./procfs"
import type { ArrivedWebhook, Receiver } from "./receiver"
import { type ServerDatabase, startReferenceServer } from "./referenceServer"
import { type Backend, notMeasured, type RunIdentity, runLabel, type RunNumber, type RunResult } from "./runResult"

export interface CivicstackRunInput {
  readonly run: RunNumber
  readonly round: number
  readonly backend: Backend
  readonly limits: Limits
  /** The batches, all posted at once (in this order); usually one. */
  readonly batches: ReadonlyArray<ReadonlyArray<PlannedLink>>
  readonly fleet: Fleet
  readonly receiver: Receiver
  /** The PostgreSQL server on which the run gets a fresh database. */
  readonly databaseUrl: string
}

/** A run whose webhooks have not all come by then is given up. */
const WEBHOOK_TIMEOUT = "15 minutes"

const serverDatabase = (backend: Backend, databaseUrl: string) =>
  backend === "PostgreSQL"
    ? Effect.map(freshDatabase(databaseUrl, "linkcheck"), (database): ServerDatabase => ({ _tag: "Postgres", url: database.url }))
    : Effect.flatMap(FileSystem.FileSystem, (fs) => fs.makeTempDirectoryScoped({ prefix: "bench-linkcheck-" })).pipe(
      Effect.map((dataDir): ServerDatabase => ({ _tag: "Pglite", dataDir })),
      Effect.mapError(failWith("cannot create a data directory for PGlite"))
    )

/** The links whose status is not the planned one (broken for a 404, ok for the others), by status and problem. */
const unplannedStatuses = (links: ReadonlyArray<PlannedLink>, port: number, report: BatchReport): string | undefined => {
  const plannedByUri = new Map(links.map((link) => [linkUri(link, port), link.kind]))
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

interface PostedBatch {
  readonly links: ReadonlyArray<PlannedLink>
  readonly id: number
  readonly secret: string
  readonly arrived: ArrivedWebhook
}

/** Every way one completed batch can differ from its plan; prefixed with the batch's number when there are several. */
const batchProblems = (batch: PostedBatch, index: number, several: boolean, port: number): ReadonlyArray<string> => {
  const prefix = several ? `batch ${index + 1}: ` : ""
  const parsed = parseWebhook(batch.arrived.body)
  if (Either.isLeft(parsed)) return [`${prefix}webhook not a batch report (${parsed.left.message})`]
  const report = parsed.right
  const { totals } = report
  const links = batch.links.length
  return [
    verifyWebhookSignature(batch.arrived.body, batch.arrived.signature, batch.secret) ? undefined : "webhook signature invalid",
    report.id === batch.id ? undefined : `webhook for batch ${report.id}, not ${batch.id}`,
    report.status === "completed" && totals.pending === 0 ? undefined : `webhook with ${totals.pending} pending`,
    totals.links === links && report.links.length === links ? undefined : `${totals.links} links in the webhook, not ${links}`,
    unplannedStatuses(batch.links, port, report)
  ].filter((problem) => problem !== undefined).map((problem) => `${prefix}${problem}`)
}

/** Every way the fleet's counts can differ from the plan and the limits. */
const fleetProblems = (links: ReadonlyArray<PlannedLink>, limits: Limits, fleet: FleetStats): ReadonlyArray<string> => {
  const peak = Math.max(0, ...fleet.peakPerHost)
  const expectedRequests = hopCount(links)
  const planHosts = new Set(links.map((link) => link.host))
  const elsewhere = fleet.requestsPerHost.reduce((sum, requests, host) => (planHosts.has(host) ? sum : sum + requests), 0)
  return [
    peak <= limits.perHost ? undefined : `${peak} requests at once on one host, limit ${limits.perHost}`,
    fleet.peakInFlight <= limits.global ? undefined : `${fleet.peakInFlight} requests at once on all hosts, limit ${limits.global}`,
    fleet.unexpected === 0 ? undefined : `${fleet.unexpected} requests for unknown paths`,
    fleet.repeated === 0 ? undefined : `${fleet.repeated} planned requests received again`,
    elsewhere === 0 ? undefined : `${elsewhere} requests to hosts outside the plan`,
    fleet.requests === expectedRequests ? undefined : `fleet received ${fleet.requests} requests, not ${expectedRequests}`
  ].filter((problem) => problem !== undefined)
}

/**
 * A server that has just started compiles the code of its first batch while it runs it: V8 compiles each function
 * on its first call, and undici compiles its HTTP parser on its first connection. Measured from a cold server, the
 * first request left 180 to 260 ms after the POST on 2026-11-26, against 94 ms from a warmed one. A server in service
 * has handled batches before, so each server gets one small batch first: `WARM_UP_LINKS` links to a port where
 * nothing listens (refused at once, so no request reaches the fleet), waited for until it is complete.
 */
const WARM_UP_LINKS = 300
const warmUp = (client: LinkcheckClientService, label: string) =>
  Effect.gen(function*() {
    const startedAt = yield* Clock.currentTimeMillis
    const created = yield* client.createBatch(
      Array.from({ length: WARM_UP_LINKS }, (_, index) => `http://127.0.0.1:1/warm-up/${index}`),
      { checkedWithin: 0, priority: "high" }
    ).pipe(Effect.mapError(failWith("the warm-up batch's POST failed")))
    const answeredAt = yield* Clock.currentTimeMillis
    yield* client.getBatch(created.id).pipe(
      Effect.mapError(failWith("the warm-up batch could not be read")),
      Effect.repeat({ until: (report) => report.status === "completed", schedule: Schedule.spaced("50 millis") }),
      Effect.timeoutFail({
        duration: "2 minutes",
        onTimeout: () => new BenchError({ message: "the warm-up batch did not complete" })
      })
    )
    const completedAt = yield* Clock.currentTimeMillis
    yield* Console.error(
      `${label}: warm-up batch of ${WARM_UP_LINKS} links to a closed port answered in ${answeredAt - startedAt} ms, complete after ${
        completedAt - startedAt
      } ms`
    )
  })

const sinceOrNull = (from: number | null, to: number | null) => (from === null || to === null ? null : to - from)

const measure = (input: CivicstackRunInput, identity: RunIdentity) =>
  Effect.gen(function*() {
    const allLinks = input.batches.flat()
    const database = yield* serverDatabase(input.backend, input.databaseUrl)
    const server = yield* startReferenceServer(database, input.limits)
    const label = `${runLabel(input)}, civicstack on ${input.backend}, ${input.batches.length} batch(es)`
    const client = yield* makeLinkcheckClient({ baseUrl: server.url, bearerToken: server.token })
    const prepared = yield* Effect.forEach(input.batches, (links, index) =>
      Effect.map(input.receiver.expectWebhook(`run-${input.run}-${input.round}-${input.backend}-${input.batches.length}-${index + 1}`), (webhook) => ({
        links,
        webhook,
        secret: crypto.randomUUID(),
        uris: links.map((link) => linkUri(link, input.fleet.port))
      })))
    yield* warmUp(client, label)
    const databaseCpu = database._tag === "Postgres"
      ? backendsCpu(database.url, input.databaseUrl)
      : Effect.succeed<BackendsCpu>(new Map())
    const databaseCpuBefore = yield* databaseCpu
    // PGlite runs in the server's process, on a thread of its own
    const pgliteCpu = Effect.try({
      try: () => namedThreadsCpuSeconds(server.pid, "pglite"),
      catch: failWith(`cannot read the threads of process ${server.pid}`)
    }).pipe(Effect.map((seconds) => (seconds === undefined ? null : seconds * 1000)))
    const pgliteCpuBefore = database._tag === "Postgres" ? null : yield* pgliteCpu
    const cpuBefore = yield* processCpuMs(server.pid)
    const startupPeakRss = yield* peakRssBytes(server.pid)
    const startRss = yield* rssBytes(server.pid)
    yield* resetPeakRss(server.pid)

    const { observed, value } = yield* observe(
      label,
      input.fleet,
      hopCount(allLinks),
      Effect.gen(function*() {
        const startedAt = yield* Clock.currentTimeMillis
        // every batch at once, as several callers would
        const posted = yield* Effect.forEach(prepared, (batch) =>
          client.createBatch(batch.uris, {
            checkedWithin: 0,
            priority: "high",
            webhookUri: batch.webhook.url,
            webhookSecretToken: batch.secret
          }).pipe(
            Effect.mapError(failWith("POST /batch failed")),
            Effect.zip(Clock.currentTimeMillis),
            Effect.map(([created, answeredAt]) => ({ ...batch, id: created.id, answeredAt }))
          ), { concurrency: "unbounded" })
        const arrived = yield* Effect.raceFirst(
          Effect.forEach(posted, (batch) => Deferred.await(batch.webhook.arrival), { concurrency: "unbounded" }),
          server.exited
        ).pipe(
          Effect.timeoutFail({
            duration: WEBHOOK_TIMEOUT,
            onTimeout: () => new BenchError({ message: `not every webhook came within ${WEBHOOK_TIMEOUT}` })
          })
        )
        return { startedAt, posted, arrived }
      })
    )
    const processCpu = (yield* processCpuMs(server.pid)) - cpuBefore
    const pgliteCpuAfter = pgliteCpuBefore === null ? null : yield* pgliteCpu
    const pgliteCpuMs = pgliteCpuBefore === null || pgliteCpuAfter === null ? null : pgliteCpuAfter - pgliteCpuBefore
    const cpuMs = processCpu - (pgliteCpuMs ?? 0)
    const databaseCpuMs = database._tag === "Postgres" ? backendsCpuSince(databaseCpuBefore, yield* databaseCpu) : pgliteCpuMs
    const runPeakRss = yield* peakRssBytes(server.pid)
    const arrivals = value.arrived.map((arrived) => arrived.arrivedAt)
    const lastArrival = Math.max(...arrivals)
    const several = input.batches.length > 1
    const problems = [
      ...value.posted.flatMap((batch, index) =>
        batchProblems({ ...batch, arrived: value.arrived[index]! }, index, several, input.fleet.port)),
      ...fleetProblems(allLinks, input.limits, observed.fleet)
    ]
    return {
      ...identity,
      ...observed,
      _tag: "Measured" as const,
      wallMs: lastArrival - value.startedAt,
      submitMs: Math.max(...value.posted.map((batch) => batch.answeredAt)) - value.startedAt,
      toFirstRequestMs: sinceOrNull(value.startedAt, observed.fleet.firstRequestAt),
      lastResponseToWebhookMs: sinceOrNull(observed.fleet.lastResponseAt, lastArrival),
      firstWebhookMs: Math.min(...arrivals) - value.startedAt,
      peakRssBytes: Math.max(startupPeakRss, runPeakRss),
      startRssBytes: startRss,
      runPeakRssBytes: runPeakRss,
      cpuMs,
      databaseCpuMs,
      problems
    }
  })

/**
 * One run of the reference server: started in a child process on a fresh database with the run's limits, it gets
 * every batch at once (one POST /batch each: priority high, checked_within 0, a signed webhook to the receiver).
 * Wall time is from the first POST to the last webhook's arrival. Anything that stops the run is reported as not
 * measured.
 */
export const runCivicstack = (
  input: CivicstackRunInput
): Effect.Effect<
  RunResult,
  never,
  FileSystem.FileSystem | CommandExecutor.CommandExecutor | HttpClient.HttpClient
> => {
  const identity = civicstackIdentity(input)
  return Effect.scoped(measure(input, identity)).pipe(Effect.catchAllCause((cause) => notMeasured(identity, cause)))
}

export const civicstackIdentity = (
  input: Pick<CivicstackRunInput, "run" | "round" | "backend" | "limits" | "batches">
): RunIdentity => {
  const allLinks = input.batches.flat()
  return {
    run: input.run,
    round: input.round,
    system: "civicstack",
    backend: input.backend,
    limits: input.limits,
    batches: input.batches.length,
    links: allLinks.length,
    lowerBoundMs: lowerBoundMs(allLinks, input.limits),
    inOrderIdealMs: inOrderIdealMs(allLinks, input.limits),
    plannedLatencyMs: plannedLatencyMs(allLinks)
  }
}
