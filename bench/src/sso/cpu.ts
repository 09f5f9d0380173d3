import { readdirSync, readFileSync } from "node:fs"

const TICKS_PER_SECOND = 100

/** User and system CPU seconds a process has used so far (Linux `/proc`). */
export const cpuSecondsOf = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND
}

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

/** What a case's CPU is read from: the server's process and, when it has one, the database server's. */
export interface CpuMeter {
  readonly serverPid: number
  readonly database: boolean
}

export interface CpuUse {
  readonly serverSeconds: number
  readonly databaseSeconds: number | undefined
}

export interface CpuReading {
  readonly serverSeconds: number
  readonly database: Map<number, number> | undefined
}

export const readCpu = (meter: CpuMeter): CpuReading => ({
  serverSeconds: cpuSecondsOf(meter.serverPid),
  database: meter.database ? readPostgresCpu() : undefined
})

export const cpuSince = (meter: CpuMeter, before: CpuReading): CpuUse => ({
  serverSeconds: cpuSecondsOf(meter.serverPid) - before.serverSeconds,
  databaseSeconds: before.database === undefined ? undefined : postgresCpuSecondsSince(before.database)
})
