import type { FileSystem } from "@effect/platform"
import { Clock, Console, Effect } from "effect"
import { loadavg } from "node:os"
import type { BenchError } from "../benchError"
import type { Fleet } from "./fleet"
import { busyShare, machineCpu, processCpuMs } from "./procfs"
import type { Observed } from "./runResult"

const progressLine = (label: string, fleet: Fleet, expectedRequests: number, startedAt: number) => {
  let previous = 0
  return Effect.gen(function*() {
    const stats = yield* fleet.stats
    const seconds = ((yield* Clock.currentTimeMillis) - startedAt) / 1000
    yield* Console.error(
      `[${label}] ${seconds.toFixed(0)} s: fleet received ${stats.requests}/~${expectedRequests} requests ` +
        `(+${stats.requests - previous}/s), ${stats.inFlight} in flight`
    )
    previous = stats.requests
  }).pipe(Effect.ignore)
}

/**
 * Runs `work` on a freshly reset fleet while printing the fleet's progress on stderr every second; adds what the
 * fleet served, the fleet's CPU time and the machine's CPU use over the run.
 */
export const observe = <A, E, R>(
  label: string,
  fleet: Fleet,
  expectedRequests: number,
  work: Effect.Effect<A, E, R>
): Effect.Effect<{ readonly value: A; readonly observed: Observed }, E | BenchError, R | FileSystem.FileSystem> =>
  Effect.gen(function*() {
    yield* fleet.reset
    const fleetCpuBefore = yield* processCpuMs(fleet.pid)
    const machineBefore = yield* machineCpu
    const startedAt = yield* Clock.currentTimeMillis
    const progress = Effect.forever(Effect.delay(progressLine(label, fleet, expectedRequests, startedAt), "1 second"))
    const value = yield* Effect.raceFirst(work, progress)
    const machineAfter = yield* machineCpu
    return {
      value,
      observed: {
        fleet: yield* fleet.stats,
        fleetCpuMs: (yield* processCpuMs(fleet.pid)) - fleetCpuBefore,
        machineBusyShare: busyShare(machineBefore, machineAfter),
        loadAverage: loadavg()[0] ?? 0
      }
    }
  })
