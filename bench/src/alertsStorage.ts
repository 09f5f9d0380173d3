/**
 * Email alerts storage bench: `npm run bench:alerts-storage` (see bench/README.md). How much the `alerts` schema
 * grows per 1,000 emails when one notification is fanned out, for a large and a small body. The core's own pieces on
 * a fresh PostgreSQL database: `migrate`, `layerSql` over `@civicstack/jobs`' SQL queue, the notification accepted by
 * `Alerts.queueNotification` and fanned out by the `workers` layer. Delivery is kept from touching the emails (the
 * provider refuses every send as the sender, which pauses delivery), so the growth is what fan-out writes.
 * Progress goes to stderr, the markdown table to stdout.
 */
import {
  Alerts,
  EmailProvider,
  layerSql,
  migrate,
  newNotification,
  normaliseListCriteria,
  TemporaryDeliveryFailure,
  workers
} from "@civicstack/core-alerts"
import { keyedRecord } from "@civicstack/core-alerts/api"
import { layerSql as jobQueueSql, migrate as migrateJobs } from "@civicstack/jobs"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Duration, Effect, Layer, Logger, LogLevel, Redacted, Schedule } from "effect"
import { execFileSync } from "node:child_process"
import { freshDatabase } from "./freshDatabase"
import { seedSubscribers } from "./alerts/seed"

const progress = (message: string) => process.stderr.write(`${message}\n`)

const subscribers = Number(process.env.BENCH_ALERTS_STORAGE_SUBSCRIBERS ?? 2000)
if (!Number.isInteger(subscribers) || subscribers < 1) throw new Error("BENCH_ALERTS_STORAGE_SUBSCRIBERS must be a whole number of at least 1")
const serverUrl = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"

const cases = [
  { label: "large (~130 KB)", bodyBytes: 130_000 },
  { label: "small (~2 KB)", bodyBytes: 2_000 }
] as const

/** A fixed pseudo-random sequence: the same bodies on every run. */
const pseudoRandom = (seed: number) => () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648
  return seed
}

/**
 * Sentences of words drawn from a vocabulary of 3,000 made-up words, so that PostgreSQL's compression of long values
 * does to the body about what it does to prose (the table shows the notification's body as stored); one phrase
 * repeated would shrink to almost nothing.
 */
const bodyOf = (bytes: number) => {
  const next = pseudoRandom(12_345)
  const syllables = ["ra", "te", "chan", "ge", "in", "co", "me", "tax", "gui", "dan", "ce", "up", "da", "ted", "bu",
    "si", "ness", "al", "low", "thre", "shold", "pub", "li", "shed", "sec", "tion", "em", "plo", "yer", "re", "lief",
    "claim", "form", "dead", "line", "turn", "pe", "nal", "ty", "in", "ter", "est", "cus", "toms", "du", "im", "port"]
  const vocabulary = Array.from({ length: 3000 }, () =>
    Array.from({ length: 1 + (next() % 4) }, () => syllables[next() % syllables.length]).join(""))
  const parts: Array<string> = []
  let length = 0
  while (length < bytes) {
    const word = vocabulary[next() % vocabulary.length]!
    const part = next() % 12 === 0 ? `${word}.${next() % 5 === 0 ? "\n\n" : " "}` : `${word} `
    parts.push(part)
    length += part.length
  }
  return parts.join("").slice(0, bytes)
}

/** Tables, their TOAST and their indexes, summed over the `alerts` schema. */
const schemaBytes = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ readonly bytes: string }>`
    SELECT COALESCE(sum(pg_total_relation_size(c.oid)), 0)::text AS bytes
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'alerts' AND c.relkind = 'r'`.pipe(Effect.map(([row]) => Number(row!.bytes))))

const emailsOf = (notificationId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ readonly count: string }>`SELECT count(*)::text AS count FROM alerts.emails WHERE notification_id = ${notificationId}`
      .pipe(Effect.map(([row]) => Number(row!.count))))

/** Every send refused as the sender's fault: delivery pauses for an hour and leaves the emails as fan-out wrote them. */
const refusingProvider = Layer.succeed(EmailProvider, {
  name: "bench-refusing",
  send: () => Effect.fail(new TemporaryDeliveryFailure({ reason: "the bench sends nothing", senderRefused: true }))
})

/** The notification's body as PostgreSQL stores it (compressed), in bytes. */
const storedBodyBytes = (notificationId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ readonly bytes: string }>`SELECT pg_column_size(body)::text AS bytes FROM alerts.notifications WHERE id = ${notificationId}`
      .pipe(Effect.map(([row]) => Number(row!.bytes))))

interface CaseResult {
  readonly label: string
  readonly bodyBytes: number
  readonly storedBodyBytes: number
  readonly emails: number
  readonly growthBytes: number
}

const runCase = (label: string, bodyBytes: number) =>
  Effect.scoped(Effect.gen(function*() {
    const database = yield* freshDatabase(serverUrl, "alerts_storage")
    const client = PgClient.layer({ url: Redacted.make(database.url), maxConnections: 4 })
    const service = layerSql({
      jobQueueInSameDatabase: true,
      authTokenSecret: Redacted.make("bench-alerts-storage"),
      publicSiteUrl: "https://www.example.org",
      delivery: { batchSize: 1, senderRefusalPause: Duration.hours(1) }
    }).pipe(Layer.provideMerge(jobQueueSql()))
    return yield* Effect.gen(function*() {
      yield* migrateJobs
      yield* migrate
      const alerts = yield* Alerts
      const { value: list } = yield* alerts.findOrCreateList({
        title: "Bench storage list",
        criteria: normaliseListCriteria({ tags: keyedRecord([["topics", ["bench-storage"]]]), links: keyedRecord([]) })
      })
      yield* seedSubscribers(list.id, subscribers)
      const before = yield* schemaBytes
      progress(`${label}: ${subscribers} subscribers seeded; alerts schema ${before} bytes`)
      const notification = yield* alerts.queueNotification(newNotification({
        subject: "A page you follow has changed",
        body: bodyOf(bodyBytes),
        tags: new Map([["topics", ["bench-storage"]]])
      }))
      const emails = yield* Effect.scoped(Effect.gen(function*() {
        yield* Layer.build(workers.pipe(Layer.provide(refusingProvider)))
        yield* emailsOf(notification.id).pipe(
          Effect.repeat({ schedule: Schedule.spaced("250 millis"), until: (count) => count >= subscribers }),
          Effect.timeoutFail({ duration: "10 minutes", onTimeout: () => new Error(`${label}: fan-out did not finish`) })
        )
        return yield* emailsOf(notification.id)
      }))
      const after = yield* schemaBytes
      progress(`${label}: ${emails} emails; alerts schema ${after} bytes`)
      return {
        label,
        bodyBytes,
        storedBodyBytes: yield* storedBodyBytes(notification.id),
        emails,
        growthBytes: after - before
      } satisfies CaseResult
    }).pipe(Effect.provide(Layer.provideMerge(service, client)))
  }))

const megabytes = (bytes: number) => (bytes / 1_000_000).toFixed(2)

/** What was measured: `BENCH_LABEL`, or the commit checked out. */
const codeLabel = () => {
  if (process.env.BENCH_LABEL) return process.env.BENCH_LABEL
  try {
    return `commit ${execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim()}`
  } catch {
    return "unknown code"
  }
}

const program = Effect.gen(function*() {
  const results = yield* Effect.forEach(cases, ({ bodyBytes, label }) => runCase(label, bodyBytes))
  const lines = [
    `## Email alerts storage: growth of the \`alerts\` schema per 1,000 emails (${codeLabel()})`,
    "",
    `One notification fanned out to ${subscribers} \`immediately\` subscribers of one list, on a fresh PostgreSQL database each.`,
    "",
    "| notification body | body as stored, KB | emails | growth, MB | growth per 1,000 emails, MB | per email, bytes |",
    "|---|---:|---:|---:|---:|---:|",
    ...results.map((result) =>
      `| ${result.label} | ${(result.storedBodyBytes / 1000).toFixed(1)} | ${result.emails} | ${megabytes(result.growthBytes)} | ${
        megabytes(result.growthBytes * 1000 / result.emails)
      } | ${Math.round(result.growthBytes / result.emails)} |`
    ),
    "",
    "Growth: `pg_total_relation_size` (table, TOAST and indexes) summed over the `alerts` schema's tables, after the",
    "fan-out minus before the notification was accepted; it includes the notification itself."
  ]
  process.stdout.write(`${lines.join("\n")}\n`)
})

// the pause of delivery is logged as an error: expected here
Effect.runPromise(program.pipe(Logger.withMinimumLogLevel(LogLevel.Fatal))).catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`)
  process.exit(1)
})
