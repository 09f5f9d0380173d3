/** CPU time of processes and threads from Linux's /proc, in seconds. */
import { readdirSync, readFileSync } from "node:fs"

/** Linux reports CPU times in USER_HZ ticks, fixed at 100 per second for user space. */
const TICKS_PER_SECOND = 100

/** User and system CPU seconds a process (or `<pid>/task/<tid>`, a thread) has used so far. */
export const cpuSecondsOf = (pid: number | string): number => {
  const path = `/proc/${pid}/stat`
  const stat = readFileSync(path, "utf8")
  // Fields after the command name, which is in parentheses and may hold spaces: utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  const [utime, stime] = [Number(fields[11]), Number(fields[12])]
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) throw new Error(`unexpected content in ${path}`)
  return (utime + stime) / TICKS_PER_SECOND
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
