/** Process and machine counters from Linux's /proc (the fleet's loopback hosts need Linux anyway). */
import { FileSystem } from "@effect/platform"
import { Effect } from "effect"
import { BenchError, failWith } from "../benchError"
import { cpuSecondsOf } from "../procCpu"

const readProcFile = (path: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => fs.readFileString(path)).pipe(
    Effect.mapError(failWith(`cannot read ${path}`))
  )

const malformed = (path: string) => new BenchError({ message: `unexpected content in ${path}` })

const statusBytes = (pid: number, field: "VmHWM" | "VmRSS") => {
  const path = `/proc/${pid}/status`
  return Effect.flatMap(readProcFile(path), (status) => {
    const kilobytes = new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(status)?.[1]
    return kilobytes === undefined ? Effect.fail(malformed(path)) : Effect.succeed(Number(kilobytes) * 1024)
  })
}

/** The process's peak resident set size (`VmHWM`), in bytes. */
export const peakRssBytes = (pid: number) => statusBytes(pid, "VmHWM")

/** The process's resident set size now (`VmRSS`), in bytes. */
export const rssBytes = (pid: number) => statusBytes(pid, "VmRSS")

/** Sets the process's peak resident set size to its current one, so that `peakRssBytes` shows the peak from now on. */
export const resetPeakRss = (pid: number) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => fs.writeFileString(`/proc/${pid}/clear_refs`, "5")).pipe(
    Effect.mapError(failWith(`cannot reset the peak RSS of process ${pid}`))
  )

/** CPU time (user + system, all threads) the process has used so far, in milliseconds. */
export const processCpuMs = (pid: number) =>
  Effect.try({ try: () => cpuSecondsOf(pid) * 1000, catch: failWith(`cannot read the CPU time of process ${pid}`) })

export interface MachineCpu {
  readonly busyTicks: number
  readonly totalTicks: number
}

/** All CPUs' busy and total time since boot. */
export const machineCpu: Effect.Effect<MachineCpu, BenchError, FileSystem.FileSystem> = Effect.flatMap(
  readProcFile("/proc/stat"),
  (stat) => {
    const [, ...ticks] = (stat.split("\n")[0] ?? "").trim().split(/\s+/).map(Number)
    const [user = NaN, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = ticks
    const busyTicks = user + nice + system + irq + softirq + steal
    return Number.isFinite(busyTicks)
      ? Effect.succeed({ busyTicks, totalTicks: busyTicks + idle + iowait })
      : Effect.fail(malformed("/proc/stat"))
  }
)

/** Share of all CPUs' time that was busy between two readings, from 0 to 1. */
export const busyShare = (before: MachineCpu, after: MachineCpu) =>
  (after.busyTicks - before.busyTicks) / Math.max(1, after.totalTicks - before.totalTicks)
