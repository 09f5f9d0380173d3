/**
 * Email alerts bench: `npm run bench:alerts` (see bench/README.md). One list of n `immediately` subscribers, seeded
 * set-based into the database the reference server migrated; one notification matching it; then how long the
 * server's fan-out takes beside a raw `INSERT ... SELECT generate_series` of n email-shaped rows, how fast
 * `POST /notifications` answers meanwhile, how fast the emails reach a Notify stand-in that accepts everything, and
 * the server's peak RSS. On PostgreSQL and on PGlite. Progress goes to stderr, the markdown report to stdout.
 */
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { PgliteClient } from "@civicstack/sql-pglite"
import { Effect, Exit, Layer, ManagedRuntime, Redacted, Scope } from "effect"
import * as Fs from "node:fs/promises"
import { availableParallelism, loadavg, tmpdir } from "node:os"
import * as Path from "node:path"
import { freshDatabase } from "./freshDatabase"
import { type CaseFigures, type CaseOutcome, renderCase } from "./alerts/report"
import { fanOutFigures, rawInsertMillis, seedSubscribers, seedSubscriptions } from "./alerts/seed"
import { type ReferenceServer, type ServerDatabase, startReferenceServer } from "./alerts/server"
import { type Backend, loadSettings } from "./alerts/settings"
import { percentileOfSorted } from "./percentile"
import { startChildServer } from "./sso/childServer"

const settings = loadSettings()
const progress = (message: string) => process.stderr.write(`${message}\n`)
const sleep = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis))

const listRequest = { title: "Bench list", tags: { topics: ["bench-alerts"] } }
const warmUpListRequest = { title: "Bench warm-up list", tags: { topics: ["bench-alerts-warm-up"] } }
const notificationBody = "A change was published to a page this list follows. ".repeat(6).trim()
const subject = "Bench: a page you follow has changed"
const footer = "You can change or cancel your subscriptions at any time."

type SqlLayer = Layer.Layer<SqlClient.SqlClient, unknown>

const sqlLayerOf = (database: ServerDatabase): SqlLayer =>
  database._tag === "Postgres"
    ? PgClient.layer({ url: Redacted.make(database.url), maxConnections: 2 })
    // where the server keeps its database in DATA_DIR, with the server's settings
    : PgliteClient.layer({ dataDir: Path.join(database.dataDir, "pglite"), settings: ["shared_buffers=16MB"] })

/** Runs `effect` on a client of its own, closed afterwards (PGlite: the data directory is free again). */
const withSql = async <A>(database: ServerDatabase, effect: Effect.Effect<A, unknown, SqlClient.SqlClient>) => {
  const runtime = ManagedRuntime.make(sqlLayerOf(database))
  try {
    return await runtime.runPromise(effect)
  } finally {
    await runtime.dispose()
  }
}

const api = (server: ReferenceServer, path: string, body: unknown) =>
  fetch(new URL(path, server.url), {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${server.token}` },
    body: JSON.stringify(body)
  })

interface SinkStats {
  readonly requests: number
  readonly unique: number
  readonly firstAt: number | null
  readonly lastNewAt: number | null
}

const sinkStats = async (sinkUrl: string): Promise<SinkStats> => (await (await fetch(`${sinkUrl}/stats`)).json()) as SinkStats

/** The alerts figures of the server's readiness answer: emails pending or sending, plus queued jobs. */
const readinessQueueSize = async (server: ReferenceServer): Promise<number | null> => {
  try {
    const response = await fetch(`${server.url}/healthcheck/ready`, { signal: AbortSignal.timeout(5000) })
    const body = (await response.json()) as Record<string, unknown>
    const found = JSON.stringify(body).match(/"queue_size":(\d+)/)
    return found === null ? null : Number(found[1])
  } catch {
    return null
  }
}

/** `POST /notifications` that match no list, `rate` a second on a fixed schedule (not waiting for answers). */
const steadyPosts = (server: ReferenceServer, rate: number) => {
  const latencies: Array<number> = []
  let sent = 0
  let answered202 = 0
  const inFlight = new Set<Promise<void>>()
  const timer = setInterval(() => {
    sent += 1
    const startedAt = performance.now()
    const request = api(server, "/notifications", {
      subject: "Bench: unrelated change",
      body: "Nobody follows this.",
      tags: { topics: [`unrelated-${sent}`] }
    }).then(async (response) => {
      await response.arrayBuffer()
      latencies.push(performance.now() - startedAt)
      if (response.status === 202) answered202 += 1
    }, () => undefined).finally(() => inFlight.delete(request))
    inFlight.add(request)
  }, 1000 / rate)
  return {
    stop: async () => {
      clearInterval(timer)
      await Promise.all(inFlight)
      const sorted = Float64Array.from(latencies).sort()
      return {
        sent,
        answered202,
        p50Ms: percentileOfSorted(sorted, 50),
        p99Ms: percentileOfSorted(sorted, 99),
        maxMs: sorted.length === 0 ? null : sorted[sorted.length - 1]!
      }
    }
  }
}

/**
 * `GET /healthcheck/live` (no database, no caller check) 20 times a second when BENCH_ALERTS_LIVENESS=1: its latency
 * is how long any request waits for the server's event loop, the floor under the POSTs' latency.
 */
const livenessProbe = (server: ReferenceServer) => {
  if (process.env.BENCH_ALERTS_LIVENESS !== "1") return { stop: () => null }
  const latencies: Array<number> = []
  const timer = setInterval(() => {
    const startedAt = performance.now()
    fetch(`${server.url}/healthcheck/live`).then((response) => response.arrayBuffer()).then(
      () => latencies.push(performance.now() - startedAt),
      () => undefined
    )
  }, 50)
  return {
    stop: () => {
      clearInterval(timer)
      const sorted = Float64Array.from(latencies).sort()
      return `GET /healthcheck/live during fan-out (the event loop's delay), p50 / p99 ${percentileOfSorted(sorted, 50)?.toFixed(1)} / ${
        percentileOfSorted(sorted, 99)?.toFixed(1)
      } ms over ${sorted.length} requests`
    }
  }
}

const peakRssMb = async (pid: number) => {
  try {
    const status = await Fs.readFile(`/proc/${pid}/status`, "utf8")
    const kilobytes = /^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1]
    return kilobytes === undefined ? null : Number(kilobytes) / 1024
  } catch {
    return null
  }
}

/** A count, and when what it counted was seen, when that is earlier than its answer (a slow count's snapshot). */
interface Reading {
  readonly count: number
  readonly seenAt: number
}

/**
 * Waits while `read` makes progress, until it reaches `target`; gives up after `stallSeconds` without progress.
 * Returns when the target was reached (ms since the epoch), or null.
 */
const awaitCount = async (
  label: string,
  target: number,
  read: () => Promise<number | Reading | null>,
  intervalMs: number,
  deadline = Number.POSITIVE_INFINITY
) => {
  let best = -1
  let progressAt = Date.now()
  let reportedAt = 0
  for (;;) {
    const reading = await read()
    const now = Date.now()
    const count = typeof reading === "object" && reading !== null ? reading.count : reading
    const seenAt = typeof reading === "object" && reading !== null ? reading.seenAt : now
    if (count !== null && count >= target) return { reachedAt: seenAt, count }
    if (count !== null && count > best) {
      best = count
      progressAt = now
    }
    if (now - reportedAt >= 5000) {
      progress(`${label}: ${count ?? "?"}/${target}`)
      reportedAt = now
    }
    if (now > deadline) {
      progress(`${label}: time is up at ${count ?? best}/${target}`)
      return { reachedAt: null, count: best }
    }
    if (now - progressAt > settings.stallSeconds * 1000) {
      progress(`${label}: no progress for ${settings.stallSeconds} s at ${best}/${target}, giving up`)
      return { reachedAt: null, count: best }
    }
    await sleep(intervalMs)
  }
}

/**
 * A server in service has fanned out and delivered before, and answered many POSTs: its code is compiled and its
 * connections (database pool, the sink's) are open. So before anything is measured, a notification to the warm-up
 * list (subscribers 1..count, subscribed to it too) is fanned out and delivered, under the steady POSTs of the
 * measured phase, until the sink has every email and the queue is empty.
 */
const warmUp = async (backend: Backend, server: ReferenceServer, sinkUrl: string, count: number) => {
  if (count === 0) return
  progress(`--- ${backend}: warm-up, a notification to ${count} subscribers delivered under ${settings.postRate} POSTs/s`)
  await fetch(`${sinkUrl}/reset`, { method: "POST" })
  const posts = steadyPosts(server, settings.postRate)
  try {
    const response = await api(server, "/notifications", {
      subject: "Bench: warm-up",
      body: notificationBody,
      tags: { topics: ["bench-alerts-warm-up"] }
    })
    if (response.status !== 202) throw new Error(`POST /notifications answered ${response.status}: ${await response.text()}`)
    const delivered = await awaitCount(`${backend} warm-up (at the sink)`, count, () => sinkStats(sinkUrl).then((stats) => stats.unique, () => null), 250)
    if (delivered.reachedAt === null) throw new Error("the warm-up's emails did not all reach the sink")
  } finally {
    await posts.stop()
  }
  // the last sent marks and the POSTs' fan-out jobs
  const deadline = Date.now() + settings.stallSeconds * 1000
  while ((await readinessQueueSize(server)) !== 0) {
    if (Date.now() > deadline) throw new Error("the queue did not empty after the warm-up")
    await sleep(250)
  }
}

const measureCase = async (backend: Backend, database: ServerDatabase, subscribers: number, sinkUrl: string): Promise<CaseFigures> => {
  const serverOptions = { notifySinkUrl: sinkUrl, emailRateLimit: settings.emailRateLimit }
  const notes: Array<string> = []

  progress(`--- ${backend}: the server (RUN=web) migrates the database; the list is made through the API`)
  const web = await startReferenceServer(database, { ...serverOptions, run: "web" })
  const createList = async (request: typeof listRequest) => {
    const response = await api(web, "/subscriber-lists", request)
    if (response.status !== 201) throw new Error(`POST /subscriber-lists answered ${response.status}: ${await response.text()}`)
    return ((await response.json()) as { subscriber_list: { id: number } }).subscriber_list.id
  }
  let listId: number
  let warmUpListId: number
  try {
    listId = await createList(listRequest)
    warmUpListId = await createList(warmUpListRequest)
  } finally {
    await web.stop()
  }
  const warmUpSubscribers = Math.min(settings.warmUpSubscribers, subscribers)

  progress(`--- ${backend}: seeding ${subscribers} subscribers and subscriptions, then the raw insert`)
  const seeded = await withSql(database, Effect.gen(function*() {
    const seedStartedAt = Date.now()
    yield* seedSubscribers(listId, subscribers)
    yield* seedSubscriptions(warmUpListId, warmUpSubscribers)
    const seedMillis = Date.now() - seedStartedAt
    const raw = yield* rawInsertMillis(subscribers, {
      subject,
      bodyBefore: `${notificationBody}\n\n`,
      bodyAfter: `\n\n${footer}`,
      unsubscribeUrlPrefix: "http://127.0.0.1:30000/email/unsubscribe/"
    })
    return { seedMillis, raw }
  }))
  progress(`${backend}: seeded in ${(seeded.seedMillis / 1000).toFixed(1)} s; raw insert ${(seeded.raw.millis / 1000).toFixed(2)} s`)

  const split = backend === "pg-split"
  progress(`--- ${backend}: the server ${split ? "(RUN=web) and a copy with the workers (RUN=workers)" : "with its workers"}; ` +
    `one matching notification, ${settings.postRate} unrelated POSTs/s meanwhile`)
  const server = await startReferenceServer(database, { ...serverOptions, run: split ? "web" : "web,workers" })
  let workersCopy = server
  let figures: Omit<CaseFigures, "fanOutBodyLength"> & { fanOutBodyLength: number | null }
  const pgCounter = database._tag === "Postgres" ? ManagedRuntime.make(sqlLayerOf(database)) : undefined
  try {
    if (split) workersCopy = await startReferenceServer(database, { ...serverOptions, run: "workers" })
    await warmUp(backend, server, sinkUrl, warmUpSubscribers)
    await fetch(`${sinkUrl}/reset`, { method: "POST" })
    const emailsNow: () => Promise<number | Reading | null> = pgCounter !== undefined
      // Counting the emails every 250 ms (a parallel scan of a table growing to ~800 MB at 1M) took a CPU and more
      // from the fan-out it measured. Until the last subscriber has an email, progress is the highest subscriber id
      // reached (one probe of the notification's unique key); then the emails are counted, and seen as of the
      // count's start (its snapshot)
      ? () =>
        pgCounter.runPromise(Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const [reached] = yield* sql<{ readonly id: string; readonly highest: number }>`
            SELECT n.id, (SELECT COALESCE(max(e.subscriber_id), 0) FROM alerts.emails e WHERE e.notification_id = n.id)::float8
              AS highest
            FROM alerts.notifications n WHERE n.subject = ${subject} ORDER BY n.created_at DESC LIMIT 1`
          if (reached === undefined || reached.highest < subscribers) return reached?.highest ?? 0
          const seenAt = Date.now()
          const [emails] = yield* sql<{ readonly count: number }>`
            SELECT count(*)::float8 AS count FROM alerts.emails WHERE notification_id = ${reached.id}`
          return { count: emails?.count ?? 0, seenAt }
        })).catch(() => null)
      // PGlite's data directory is the server's alone while it runs: emails existing = emails the sink has (sent or
      // about to be marked so) + those pending or sending, which can count the few at the sink not yet marked twice
      : async () => {
        const [queued, sink] = await Promise.all([readinessQueueSize(server), sinkStats(sinkUrl)])
        return queued === null ? null : queued + sink.unique
      }
    const posts = steadyPosts(server, settings.postRate)
    const liveness = livenessProbe(server)
    const postedAt = Date.now()
    let fanOut: Awaited<ReturnType<typeof awaitCount>>
    let postFigures: Awaited<ReturnType<typeof posts.stop>>
    try {
      const matching = await api(server, "/notifications", { subject, body: notificationBody, tags: { topics: ["bench-alerts"] } })
      if (matching.status !== 202) throw new Error(`POST /notifications answered ${matching.status}: ${await matching.text()}`)
      fanOut = await awaitCount(`${backend} fan-out (emails)`, subscribers, emailsNow, 250)
    } finally {
      postFigures = await posts.stop()
      const livenessNote = liveness.stop()
      if (livenessNote !== null) {
        notes.push(livenessNote)
        progress(livenessNote)
      }
    }
    progress(`${backend}: fan-out ${fanOut.reachedAt === null ? "incomplete" : `${((fanOut.reachedAt - postedAt) / 1000).toFixed(2)} s`}; POST p99 ${postFigures.p99Ms?.toFixed(1)} ms`)
    const delivered = await awaitCount(
      `${backend} delivery (at the sink)`,
      subscribers,
      () => sinkStats(sinkUrl).then((stats) => stats.unique, () => null),
      500,
      settings.deliverySeconds === undefined ? Number.POSITIVE_INFINITY : postedAt + settings.deliverySeconds * 1000
    )
    const sink = await sinkStats(sinkUrl)
    const deliveredCount = sink.unique
    const deliverySeconds = sink.firstAt !== null && sink.lastNewAt !== null ? (sink.lastNewAt - sink.firstAt) / 1000 : null
    if (delivered.reachedAt === null) {
      notes.push(`delivery stopped being watched at ${deliveredCount} of ${subscribers} emails (stall or BENCH_ALERTS_DELIVERY_SECONDS); the rate is over what arrived`)
    }
    if (sink.firstAt !== null) notes.push(`first email at the sink ${((sink.firstAt - postedAt) / 1000).toFixed(2)} s after the POST; delivery phase ${deliverySeconds?.toFixed(1)} s`)
    notes.push(`POST latency max ${postFigures.maxMs?.toFixed(1) ?? "–"} ms over ${postFigures.sent} requests at ${settings.postRate}/s`)
    figures = {
      subscribers,
      seedSeconds: seeded.seedMillis / 1000,
      rawInsertSeconds: seeded.raw.millis / 1000,
      rawBodyLength: seeded.raw.averageBodyLength,
      fanOutSeconds: fanOut.reachedAt === null ? null : (fanOut.reachedAt - postedAt) / 1000,
      fanOutBodyLength: null,
      posts: postFigures,
      deliveryPerSecond: deliverySeconds === null || deliverySeconds === 0 ? null : (deliveredCount - 1) / deliverySeconds,
      delivered: deliveredCount,
      sinkRequests: sink.requests,
      peakRssMb: await peakRssMb(workersCopy.pid),
      notes
    }
    if (split) notes.push(`peak RSS of the copy that serves the API (RUN=web): ${(await peakRssMb(server.pid))?.toFixed(0)} MB`)
  } finally {
    await pgCounter?.dispose()
    await server.stop()
    if (workersCopy !== server) await workersCopy.stop()
  }
  const written = await withSql(database, fanOutFigures(subject))
  notes.push(`afterwards: ${written.emails} alert emails in alerts.emails, ${written.sent} marked sent`)
  notes.push(`load average (1 min) at the end: ${loadavg()[0]?.toFixed(2)} on ${availableParallelism()} CPUs`)
  return { ...figures, fanOutBodyLength: written.averageBodyLength }
}

const failed = (backend: Backend, error: unknown): CaseOutcome => {
  progress(`${backend} failed: ${String(error)}`)
  return { _tag: "NotRun", reason: `failed: ${String(error)}` }
}

const pgliteCase = async (sinkUrl: string): Promise<CaseOutcome> => {
  const parent = await Fs.mkdtemp(Path.join(tmpdir(), "civicstack-bench-alerts-data-"))
  try {
    const figures = await measureCase("pglite", { _tag: "Pglite", dataDir: Path.join(parent, "data") }, settings.pgliteSubscribers, sinkUrl)
    return { _tag: "Measured", figures }
  } catch (error) {
    return failed("pglite", error)
  } finally {
    await Fs.rm(parent, { recursive: true, force: true })
  }
}

/** On a fresh `bench_alerts_<random>` database, dropped afterwards whatever happens. */
const pgCase = async (backend: "pg" | "pg-split", sinkUrl: string): Promise<CaseOutcome> => {
  const scope = Effect.runSync(Scope.make())
  try {
    const created = await Effect.runPromiseExit(Scope.extend(freshDatabase(settings.databaseUrl, "alerts"), scope))
    if (Exit.isFailure(created)) return { _tag: "NotRun", reason: `PostgreSQL unreachable at ${settings.databaseUrl}` }
    const figures = await measureCase(backend, { _tag: "Postgres", url: created.value.url }, settings.pgSubscribers, sinkUrl)
    return { _tag: "Measured", figures }
  } catch (error) {
    return failed(backend, error)
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

const sink = await startChildServer<{ url: string }>("../alerts/sinkMain.ts")
const sections: Array<string> = []
try {
  if (settings.only.has("pg")) sections.push(renderCase("pg", await pgCase("pg", sink.description.url)))
  if (settings.only.has("pg-split")) sections.push(renderCase("pg-split", await pgCase("pg-split", sink.description.url)))
  if (settings.only.has("pglite")) sections.push(renderCase("pglite", await pgliteCase(sink.description.url)))
} finally {
  await sink.stop()
}

process.stdout.write([
  "## Email alerts: fan-out and delivery of one notification to one list",
  "",
  `Node ${process.version}, ${availableParallelism()} CPUs; the server sends through \`notify\` to a local sink answering 201 at once, ` +
  `EMAIL_RATE_LIMIT=${settings.emailRateLimit}; ${settings.postRate} unrelated POST /notifications per second during fan-out.`,
  "",
  ...sections
].join("\n") + "\n")
