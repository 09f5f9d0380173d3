import { parseArgs } from "node:util"

export const caseGroups = ["ceiling", "pglite", "pg", "oidc-provider", "oidc-provider-pg"] as const
export type CaseGroup = (typeof caseGroups)[number]

export interface SsoBenchSettings {
  readonly seconds: number
  readonly warmupSeconds: number
  readonly connections: number
  readonly users: number
  readonly refreshPool: number
  readonly databaseUrl: string
  readonly only: ReadonlySet<CaseGroup>
}

export const wholeNumber = (name: string, fallback: number, minimum: number): number => {
  const raw = process.env[name]
  if (raw === undefined || raw === "") return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < minimum) throw new Error(`${name} must be a whole number of at least ${minimum}, not ${raw}`)
  return value
}
const positiveInteger = (name: string, fallback: number) => wholeNumber(name, fallback, 1)

const isCaseGroup = (name: string): name is CaseGroup => (caseGroups as ReadonlyArray<string>).includes(name)

export const loadSettings = (): SsoBenchSettings => {
  const { values } = parseArgs({ options: { only: { type: "string" } }, strict: true })
  const requested = values.only?.split(",").map((name) => name.trim()).filter((name) => name.length > 0) ?? [...caseGroups]
  const unknown = requested.filter((name) => !isCaseGroup(name))
  if (unknown.length > 0) throw new Error(`--only: unknown ${unknown.join(", ")}; expected some of ${caseGroups.join(", ")}`)
  return {
    seconds: positiveInteger("BENCH_SSO_SECONDS", 10),
    warmupSeconds: wholeNumber("BENCH_SSO_WARMUP_SECONDS", 2, 0),
    connections: positiveInteger("BENCH_SSO_CONNECTIONS", 64),
    users: positiveInteger("BENCH_SSO_USERS", 1000),
    refreshPool: positiveInteger("BENCH_SSO_REFRESH_POOL", 20000),
    databaseUrl: process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
    only: new Set(requested.filter(isCaseGroup))
  }
}
