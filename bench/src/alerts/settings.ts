import { parseArgs } from "node:util"

/** `pg-split`: PostgreSQL with the API and the workers in two copies of the server (`RUN=web`, `RUN=workers`). */
export const backends = ["pg", "pg-split", "pglite"] as const
export type Backend = (typeof backends)[number]
const defaultBackends: ReadonlyArray<Backend> = ["pg", "pglite"]

export interface AlertsBenchSettings {
  /** Subscribers of the one list, on PostgreSQL. */
  readonly pgSubscribers: number
  /** Subscribers of the one list, on PGlite. */
  readonly pgliteSubscribers: number
  /** Non-matching `POST /notifications` per second while the fan-out runs. */
  readonly postRate: number
  /** The server's EMAIL_RATE_LIMIT: high, so that the limit measured is the server's, not the configured one. */
  readonly emailRateLimit: number
  /** A phase with no progress for this long stops the case. */
  readonly stallSeconds: number
  /** Subscribers of the warm-up list, whose notification is fanned out and delivered before anything is measured (0: none). */
  readonly warmUpSubscribers: number
  /** When set, delivery is watched for at most this long after the matching POST (a rate over part of the emails). */
  readonly deliverySeconds: number | undefined
  readonly databaseUrl: string
  readonly only: ReadonlySet<Backend>
}

const integerSetting = (name: string, fallback: number, least: number): number => {
  const raw = process.env[name]
  if (raw === undefined || raw === "") return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < least) throw new Error(`${name} must be a whole number of at least ${least}, not ${raw}`)
  return value
}

const positiveInteger = (name: string, fallback: number): number => integerSetting(name, fallback, 1)

const isBackend = (name: string): name is Backend => (backends as ReadonlyArray<string>).includes(name)

export const loadSettings = (): AlertsBenchSettings => {
  const { values } = parseArgs({ options: { only: { type: "string" } }, strict: true })
  const requested = values.only?.split(",").map((name) => name.trim()).filter((name) => name.length > 0) ?? defaultBackends
  const unknown = requested.filter((name) => !isBackend(name))
  if (unknown.length > 0) throw new Error(`--only: unknown ${unknown.join(", ")}; expected some of ${backends.join(", ")}`)
  return {
    pgSubscribers: positiveInteger("BENCH_ALERTS_SUBSCRIBERS", 1_000_000),
    pgliteSubscribers: positiveInteger("BENCH_ALERTS_PGLITE_SUBSCRIBERS", 100_000),
    postRate: positiveInteger("BENCH_ALERTS_POST_RATE", 50),
    emailRateLimit: positiveInteger("BENCH_ALERTS_EMAIL_RATE_LIMIT", 100_000),
    stallSeconds: positiveInteger("BENCH_ALERTS_STALL_SECONDS", 60),
    warmUpSubscribers: integerSetting("BENCH_ALERTS_WARM_UP_SUBSCRIBERS", 2000, 0),
    deliverySeconds: process.env.BENCH_ALERTS_DELIVERY_SECONDS ? positiveInteger("BENCH_ALERTS_DELIVERY_SECONDS", 1) : undefined,
    databaseUrl: process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
    only: new Set(requested.filter(isBackend))
  }
}
