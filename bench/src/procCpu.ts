/** CPU time of processes and threads from Linux's /proc, in seconds. */
import { readdirSync, readFileSync } from "node:fs"

/** Linux reports CPU times in USER_HZ ticks, fixed at 100 per second for user space. */
const TICKS_PER_SECOND = 100

/** User and system CPU seconds a process (or `<pid>/task/<tid>`, a thread) has used so far. */
export const cpuSecondsOf = (pid: number | string): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND
}

/**
 * CPU seconds so far of the process's threads named `name` (e.g. `pglite`, the embedded database's thread);
 * undefined when it has none.
 */
export const namedThreadsCpuSeconds = (pid: number, name: string): number | undefined => {
  let total: number | undefined
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      if (readFileSync(`/proc/${pid}/task/${task}/comm`, "utf8").trim() !== name) continue
      total = (total ?? 0) + cpuSecondsOf(`${pid}/task/${task}`)
    } catch {
      // the thread ended meanwhile
    }
  }
  return total
}
