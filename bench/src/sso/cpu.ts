import { readdirSync, readFileSync } from "node:fs"
import { cpuSecondsOf, namedThreadsCpuSeconds } from "../procCpu"

/** CPU seconds so far of each process named `postgres`: the database server's backends, whoever they serve. */
const postgresProcesses = (): Map<number, number> => {
  const seconds = new Map<number, number>()
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (readFileSync(`/proc/${entry}/comm`, "utf8").trim() === "postgres") seconds.set(Number(entry), cpuSecondsOf(Number(entry)))
    } catch {
      // the process ended meanwhile
    }
  }
  return seconds
}

/** A reading of PostgreSQL's CPU, to take `postgresCpuSecondsSince` from. */
export const readPostgresCpu = postgresProcesses

/**
 * The CPU seconds PostgreSQL's processes used since `before`: a process that ended meanwhile is left out (its last
 * moments unseen) rather than subtracted, and one that started meanwhile counts whole.
 */
export const postgresCpuSecondsSince = (before: Map<number, number>): number => {
  let total = 0
  for (const [pid, seconds] of postgresProcesses()) total += seconds - (before.get(pid) ?? 0)
  return total
}

/**
 * What a case's CPU is read from: the server's process and its database, either the database server's processes or
 * PGlite's thread inside the server's process (whose CPU then counts as the database's, not the server's).
 */
export interface CpuMeter {
  readonly serverPid: number
  readonly database: "postgres" | "pglite-thread" | "none"
}

export interface CpuUse {
  readonly serverSeconds: number
  readonly databaseSeconds: number | undefined
}

export interface CpuReading {
  readonly processSeconds: number
  readonly postgres: Map<number, number> | undefined
  readonly pgliteThread: number | undefined
}

export const readCpu = (meter: CpuMeter): CpuReading => ({
  processSeconds: cpuSecondsOf(meter.serverPid),
  postgres: meter.database === "postgres" ? readPostgresCpu() : undefined,
  pgliteThread: meter.database === "pglite-thread" ? namedThreadsCpuSeconds(meter.serverPid, "pglite") : undefined
})

export const cpuSince = (meter: CpuMeter, before: CpuReading): CpuUse => {
  const after = readCpu(meter)
  const pgliteThread = after.pgliteThread === undefined || before.pgliteThread === undefined
    ? undefined
    : after.pgliteThread - before.pgliteThread
  const postgres = before.postgres === undefined ? undefined : postgresCpuSecondsSince(before.postgres)
  return {
    serverSeconds: after.processSeconds - before.processSeconds - (pgliteThread ?? 0),
    databaseSeconds: postgres ?? pgliteThread
  }
}
