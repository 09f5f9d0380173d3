import { parseArgs } from "node:util"
import { wholeNumber } from "../sso/settings"

export const backends = ["pg", "pglite"] as const
export type Backend = (typeof backends)[number]

export interface SoakSettings {
  readonly seconds: number
  /** Length of one window of the running figures. */
  readonly sampleSeconds: number
  /** RSS must stay within `rssTolerance` of its value at this point of the run. */
  readonly settleSeconds: number
  readonly rssTolerance: number
  /** `POST /notifications` a second, all connections together (each fans out to a list's subscribers). */
  readonly notificationRate: number
  /** `POST /batch` a second, all connections together (each queues `linksPerBatch` checks and a webhook). */
  readonly batchRate: number
  readonly linksPerBatch: number
  /** Users with an API token, rotated through by `GET /user.json`. */
  readonly users: number
  readonly databaseUrl: string
  readonly only: ReadonlySet<Backend>
}

const isBackend = (name: string): name is Backend => (backends as ReadonlyArray<string>).includes(name)

export const loadSettings = (): SoakSettings => {
  const { values } = parseArgs({ options: { only: { type: "string" } }, strict: true })
  const requested = values.only?.split(",").map((name) => name.trim()).filter((name) => name.length > 0) ?? [...backends]
  const unknown = requested.filter((name) => !isBackend(name))
  if (unknown.length > 0) throw new Error(`--only: unknown ${unknown.join(", ")}; expected some of ${backends.join(", ")}`)
  return {
    seconds: wholeNumber("BENCH_SOAK_SECONDS", 120, 10),
    sampleSeconds: wholeNumber("BENCH_SOAK_SAMPLE_SECONDS", 10, 1),
    settleSeconds: 30,
    rssTolerance: 0.1,
    notificationRate: wholeNumber("BENCH_SOAK_NOTIFICATION_RATE", 10, 1),
    batchRate: wholeNumber("BENCH_SOAK_BATCH_RATE", 2, 1),
    linksPerBatch: wholeNumber("BENCH_SOAK_BATCH_LINKS", 10, 1),
    users: wholeNumber("BENCH_SOAK_USERS", 200, 1),
    databaseUrl: process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
    only: new Set(requested.filter(isBackend))
  }
}
