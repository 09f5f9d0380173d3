import { readdirSync, readFileSync } from "node:fs"

const TICKS_PER_SECOND = 100

/** User and system CPU seconds a process has used so far (Linux `/proc`). */
export const cpuSecondsOf = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND
}

/** Of every process named `postgres` on the machine: the database server's backends, whoever they serve. */
export const postgresCpuSeconds = (): number => {
  let total = 0
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (readFileSync(`/proc/${entry}/comm`, "utf8").trim() === "postgres") total += cpuSecondsOf(Number(entry))
    } catch {
      // the process ended meanwhile
    }
  }
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

export const readCpu = (meter: CpuMeter): CpuUse => ({
  serverSeconds: cpuSecondsOf(meter.serverPid),
  databaseSeconds: meter.database ? postgresCpuSeconds() : undefined
})

export const cpuSince = (meter: CpuMeter, before: CpuUse): CpuUse => {
  const now = readCpu(meter)
  return {
    serverSeconds: now.serverSeconds - before.serverSeconds,
    databaseSeconds: now.databaseSeconds === undefined || before.databaseSeconds === undefined
      ? undefined
      : now.databaseSeconds - before.databaseSeconds
  }
}
