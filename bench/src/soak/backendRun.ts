import { ALERTS_APPLICATION } from "@civicstack/core-alerts/api"
import { LINKCHECK_APPLICATION } from "@civicstack/core-linkcheck/api"
import { FileSystem } from "@effect/platform"
import { Duration, Effect, type Scope } from "effect"
import { randomBytes, randomUUID } from "node:crypto"
import * as Fs from "node:fs"
import { loadavg } from "node:os"
import * as Path from "node:path"
import { type BenchError, failWith } from "../benchError"
import { freshDatabase } from "../freshDatabase"
import { rssBytes } from "../linkcheck/procfs"
import type { Receiver } from "../linkcheck/receiver"
import { writeBootstrap } from "../sso/bootstrap"
import { obtainRefreshTokens } from "../sso/refreshPool"
import { type ReferenceServer, type ServerDatabase, startReferenceServer } from "../sso/referenceServer"
import { createAlertsFixtures, SUBSCRIBERS_PER_NOTIFIED_LIST } from "./alertsFixtures"
import { listLookups, newSubscriptions, notifications } from "./alertsRoutes"
import { batches, checks } from "./linkcheckRoutes"
import { connections, REFRESH_CHAINS_PER_CONNECTION } from "./mix"
import { type RouteLoad, type RunningLoad, startRouteLoad } from "./routeLoad"
import { type RouteFigures, RouteMeter } from "./routeMeter"
import { type RssVerdict, rssVerdict, type Sample, sampleLine } from "./sample"
import { type LogSummary, summariseLog } from "./serverLog"
import type { Backend, SoakSettings } from "./settings"
import { refreshGrants, userJson } from "./ssoRoutes"

export interface SharedFixtures {
  /** The fleet's links, for the checks and batches. */
  readonly uris: ReadonlyArray<string>
  readonly receiver: Receiver
  readonly sinkUrl: string
  /** Where each run's server output is kept. */
  readonly logDirectory: string
}

export interface RouteTotals {
  readonly route: string
  readonly connections: number
  readonly rate: number | undefined
  readonly figures: RouteFigures
  readonly seconds: number
  readonly unexpectedStatuses: ReadonlyMap<number, number>
}

export type BackendOutcome =
  | {
    readonly _tag: "Measured"
    readonly backend: Backend
    readonly startedAt: Date
    readonly samples: ReadonlyArray<Sample>
    readonly totals: ReadonlyArray<RouteTotals>
    readonly rss: RssVerdict | null
    readonly notes: ReadonlyArray<string>
    readonly log: LogSummary
    readonly logFile: string
  }
  | { readonly _tag: "NotRun"; readonly backend: Backend; readonly reason: string }

/** After the load, how long the backlog (emails, checks, webhooks) may take to drain before the server stops. */
const DRAIN_SECONDS = 30

const progress = (message: string) => Effect.sync(() => process.stderr.write(`${message}\n`))

const serverDatabase = (backend: Backend, databaseUrl: string) =>
  backend === "pg"
    ? Effect.map(freshDatabase(databaseUrl, "soak"), (database): ServerDatabase => ({ _tag: "Postgres", url: database.url }))
    : Effect.flatMap(FileSystem.FileSystem, (fs) => fs.makeTempDirectoryScoped({ prefix: "civicstack-bench-soak-" })).pipe(
      Effect.map((dataDir): ServerDatabase => ({ _tag: "Pglite", dataDir })),
      Effect.mapError(failWith("cannot create a data directory for PGlite"))
    )

/** The settings of the services other than SSO: emails through `notify` to the sink, checks of loopback hosts allowed. */
const serverEnv = (sinkUrl: string) => ({
  PUBLIC_SITE_URL: "https://soak.bench.example",
  EMAIL_PROVIDER: "notify",
  NOTIFY_BASE_URL: sinkUrl,
  // `{key_name}-{service_id}-{secret_key}`, as the notify provider expects; the sink checks nothing
  NOTIFY_API_KEY: `soak-${randomUUID()}-${randomUUID()}`,
  NOTIFY_TEMPLATE_ID: randomUUID(),
  NOTIFY_ALLOW_PRIVATE_ADDRESSES: "true",
  // given, so that a server on PostgreSQL (no DATA_DIR) does not make one in `./data` of the repository
  ALERTS_AUTH_TOKEN_SECRET: randomBytes(32).toString("hex"),
  LINKCHECK_ALLOW_PRIVATE_ADDRESSES: "true"
})

interface Backlog {
  readonly alertsQueue: number | null
  readonly pendingChecks: number | null
  readonly oldestJobSeconds: number | null
}

interface ReadinessAnswer {
  readonly queues?: ReadonlyArray<{ readonly oldest_runnable_age_ms?: number | null }>
  readonly services?: Record<string, Record<string, number | null>>
}

const readBacklog = (server: ReferenceServer): Effect.Effect<Backlog> =>
  Effect.tryPromise(async () => {
    const response = await fetch(`${server.url}/healthcheck/ready`, { signal: AbortSignal.timeout(5000) })
    return (await response.json()) as ReadinessAnswer
  }).pipe(
    Effect.map(({ queues, services }) => ({
      alertsQueue: services?.alerts?.queue_size ?? null,
      pendingChecks: services?.linkcheck?.pending_checks ?? null,
      oldestJobSeconds: Math.max(0, ...(queues ?? []).map((queue) => queue.oldest_runnable_age_ms ?? 0)) / 1000
    })),
    Effect.orElseSucceed(() => ({ alertsQueue: null, pendingChecks: null, oldestJobSeconds: null }))
  )

const sinkEmails = (sinkUrl: string) =>
  Effect.tryPromise(async () => ((await (await fetch(`${sinkUrl}/stats`)).json()) as { unique: number }).unique).pipe(
    Effect.orElseSucceed(() => null)
  )

const startServer = (database: ServerDatabase, bootstrapFile: string, sinkUrl: string, logFile: string) =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      const output = yield* Effect.acquireRelease(Effect.sync(() => Fs.openSync(logFile, "a")), (fd) => Effect.sync(() => Fs.closeSync(fd)))
      return yield* Effect.tryPromise({
        try: () => startReferenceServer(database, bootstrapFile, { services: "sso,alerts,linkcheck", env: serverEnv(sinkUrl), outputFd: output }),
        catch: failWith(`the reference server did not start (its output: ${logFile})`)
      })
    }),
    (server) => Effect.promise(() => server.stop())
  )

/** A route family ready to start, its request type hidden. */
interface PreparedLoad {
  readonly route: string
  readonly connections: number
  readonly rate: number | undefined
  readonly start: (meter: RouteMeter) => RunningLoad
}

const prepare = <A>(url: string, seconds: number, load: RouteLoad<A>): PreparedLoad => ({
  route: load.route,
  connections: load.connections,
  rate: load.rate,
  start: (meter) => startRouteLoad(url, load, seconds, meter)
})

type Measured = Extract<BackendOutcome, { _tag: "Measured" }>

const measure = (
  backend: Backend,
  settings: SoakSettings,
  shared: SharedFixtures,
  logFile: string
): Effect.Effect<Omit<Measured, "log">, BenchError, FileSystem.FileSystem | Scope.Scope> =>
  Effect.gen(function*() {
    const label = backend === "pg" ? "pg    " : "pglite"
    const database = yield* serverDatabase(backend, settings.databaseUrl)
    const bootstrap = yield* Effect.acquireRelease(
      Effect.promise(() => writeBootstrap(settings.users, [ALERTS_APPLICATION, LINKCHECK_APPLICATION])),
      (file) => Effect.promise(() => file.remove())
    )
    yield* progress(`--- ${backend}: starting the reference server (all services; output in ${logFile})`)
    const server = yield* startServer(database, bootstrap.file, shared.sinkUrl, logFile)
    const alertsToken = bootstrap.callerTokens[ALERTS_APPLICATION]!
    const linkcheckToken = bootstrap.callerTokens[LINKCHECK_APPLICATION]!

    yield* progress(`${backend}: email alert lists and subscribers, refresh token chains`)
    const alerts = yield* Effect.tryPromise({
      try: () => createAlertsFixtures(server.url, alertsToken),
      catch: failWith("the email alert lists could not be made")
    })
    const chains = yield* Effect.tryPromise({
      try: () => obtainRefreshTokens(server.url, connections.refresh * REFRESH_CHAINS_PER_CONNECTION, 4, () => {}),
      catch: failWith("the refresh tokens could not be obtained")
    })
    yield* Effect.tryPromise({ try: () => fetch(`${shared.sinkUrl}/reset`, { method: "POST" }), catch: failWith("cannot reset the sink") })

    const run = `${backend}-${Date.now().toString(36)}`
    const refresh = refreshGrants(chains, connections.refresh)
    const notificationLoad = notifications(alertsToken, alerts, connections.notifications, settings.notificationRate)
    const batchLoad = batches(linkcheckToken, shared.uris, shared.receiver, {
      run,
      connections: connections.batches,
      rate: settings.batchRate,
      linksPerBatch: settings.linksPerBatch
    })
    const loads = [
      prepare(server.url, settings.seconds, userJson(bootstrap.apiTokens, connections.userJson)),
      prepare(server.url, settings.seconds, refresh),
      prepare(server.url, settings.seconds, listLookups(alertsToken, alerts, connections.lists)),
      prepare(server.url, settings.seconds, newSubscriptions(alertsToken, alerts, run, connections.subscriptions)),
      prepare(server.url, settings.seconds, notificationLoad),
      prepare(server.url, settings.seconds, checks(linkcheckToken, shared.uris, connections.checks)),
      prepare(server.url, settings.seconds, batchLoad)
    ]
    const meters = loads.map((load) => new RouteMeter(load.route))

    yield* progress(`--- ${backend}: ${settings.seconds} s of load, ${loads.reduce((sum, load) => sum + load.connections, 0)} connections; ` +
      `per window: requests p50/p99 ms per route`)
    const startedAt = new Date()
    const running = loads.map((load, index) => load.start(meters[index]!))
    yield* Effect.addFinalizer(() => Effect.sync(() => running.forEach((load) => load.stop())))
    const samples: Array<Sample> = []
    const takeSample = Effect.gen(function*() {
      const elapsedSeconds = (Date.now() - startedAt.getTime()) / 1000
      const routes = meters.map((meter) => ({ route: meter.route, ...meter.takeWindow() }))
      const rss = yield* rssBytes(server.pid).pipe(Effect.orElseSucceed(() => null))
      const backlog = yield* readBacklog(server)
      const sample: Sample = {
        elapsedSeconds,
        routes,
        total5xx: meters.reduce((sum, meter) => sum + meter.total().status5xx, 0),
        rssBytes: rss,
        ...backlog
      }
      samples.push(sample)
      yield* progress(sampleLine(label, sample))
    })
    for (let at = settings.sampleSeconds; at < settings.seconds; at += settings.sampleSeconds) {
      yield* Effect.sleep(Duration.millis(Math.max(0, startedAt.getTime() + at * 1000 - Date.now())))
      yield* takeSample
    }
    yield* Effect.tryPromise({ try: () => Promise.all(running.map((load) => load.done)), catch: failWith("autocannon failed") })
    yield* takeSample
    const loadSeconds = (Date.now() - startedAt.getTime()) / 1000

    yield* progress(`${backend}: load over; up to ${DRAIN_SECONDS} s for the backlog and the webhooks`)
    const drainStartedAt = Date.now()
    let backlog = yield* readBacklog(server)
    while (
      Date.now() - drainStartedAt < DRAIN_SECONDS * 1000 &&
      (backlog.alertsQueue !== 0 || backlog.pendingChecks !== 0 || batchLoad.webhooks().arrived < batchLoad.webhooks().accepted)
    ) {
      yield* Effect.sleep("500 millis")
      backlog = yield* readBacklog(server)
    }
    const drainSeconds = (Date.now() - drainStartedAt) / 1000
    const webhooks = batchLoad.webhooks()
    const emails = yield* sinkEmails(shared.sinkUrl)
    const acceptedNotifications = meters.find((meter) => meter.route === notificationLoad.route)!.total()
    const expectedEmails = (acceptedNotifications.requests - acceptedNotifications.status5xx - acceptedNotifications.statusOther) *
      SUBSCRIBERS_PER_NOTIFIED_LIST
    const notes = [
      `after the load: ${drainSeconds.toFixed(1)} s until the backlog was drained or ${DRAIN_SECONDS} s passed; ` +
      `then alerts queue ${backlog.alertsQueue ?? "-"}, pending checks ${backlog.pendingChecks ?? "-"}`,
      // a request still in flight when autocannon stopped has no answer counted, though the server may have taken it
      `emails at the sink: ${emails ?? "-"}; the notifications answered 202 fan out to ${expectedEmails} ` +
      `(those in flight when the load stopped may add theirs)`,
      `webhooks at the receiver: ${webhooks.arrived} of ${webhooks.accepted} accepted batches`,
      `refresh token chains: ${chains.length}, broken by an answer without a new token: ${refresh.brokenChains()}`,
      `load average (1 min) at the end: ${loadavg()[0]?.toFixed(2)}`
    ]
    return {
      _tag: "Measured" as const,
      backend,
      startedAt,
      samples,
      totals: loads.map((load, index) => ({
        route: load.route,
        connections: load.connections,
        rate: load.rate,
        figures: meters[index]!.total(),
        seconds: loadSeconds,
        unexpectedStatuses: meters[index]!.unexpectedStatuses
      })),
      rss: rssVerdict(samples, settings.settleSeconds, settings.rssTolerance),
      notes,
      logFile
    }
  })

/**
 * One backend's soak: the reference server serving all three services on a fresh database, the records the requests
 * need made through the API, then every route family under load at once for `settings.seconds`, with each window's
 * figures printed as it ends. The server's output is summarised once it has stopped.
 */
export const runBackend = (
  backend: Backend,
  settings: SoakSettings,
  shared: SharedFixtures
): Effect.Effect<BackendOutcome, never, FileSystem.FileSystem> => {
  const logFile = Path.join(shared.logDirectory, `server-${backend}.log`)
  return Effect.scoped(measure(backend, settings, shared, logFile)).pipe(
    Effect.flatMap((measured) =>
      Effect.map(
        Effect.tryPromise({ try: () => summariseLog(logFile), catch: failWith(`cannot read ${logFile}`) }),
        (log): BackendOutcome => ({ ...measured, log })
      )
    ),
    Effect.catchAll((error) =>
      Effect.as(progress(`${backend} failed: ${error.message}`), {
        _tag: "NotRun" as const,
        backend,
        reason: `${error.message} (server output: ${logFile})`
      })
    )
  )
}
