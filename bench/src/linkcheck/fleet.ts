import { Command, type CommandExecutor, HttpClient, HttpClientResponse } from "@effect/platform"
import { Effect, Schema, type Scope } from "effect"
import { fileURLToPath } from "node:url"
import { type BenchError, failWith } from "../benchError"
import { followOutput, unlessExited } from "./childOutput"
import { FleetReady, fleetReadyPrefix, FleetStats } from "./fleetProtocol"
import type { GrowthPlanSize } from "./linkPlan"

const fleetEntry = fileURLToPath(new URL("./fleetMain.ts", import.meta.url))

/** The loopback fleet, running in a child process of its own. */
export interface Fleet {
  /** The port every fleet host listens on. */
  readonly port: number
  readonly pid: number
  /** What the fleet has served since the last `reset`. */
  readonly stats: Effect.Effect<FleetStats, BenchError>
  /** Zeroes the request counts and sets each host's peak to its requests in progress now. */
  readonly reset: Effect.Effect<void, BenchError>
}

/**
 * Starts the fleet's process serving the one-batch plan of `links` links and the growth plan of `growth` (none when
 * undefined), for the life of the scope.
 */
export const startFleet = (
  links: number,
  growth: GrowthPlanSize | undefined
): Effect.Effect<Fleet, BenchError, Scope.Scope | CommandExecutor.CommandExecutor | HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const child = yield* Command.make(
      process.execPath,
      ...process.execArgv,
      fleetEntry,
      `--links=${links}`,
      `--growth-batches=${growth?.batches ?? 0}`,
      `--growth-links=${growth?.linksPerBatch ?? 0}`,
      `--growth-hosts=${growth?.hosts ?? 0}`
    ).pipe(
      Command.start,
      Effect.mapError(failWith("cannot start the fleet's process"))
    )
    const output = yield* followOutput(child, "fleet", [fleetReadyPrefix])
    const ready = yield* unlessExited(output, output.line(fleetReadyPrefix), "ready line from the fleet", "60 seconds").pipe(
      Effect.flatMap(Schema.decodeUnknown(Schema.parseJson(FleetReady))),
      Effect.mapError(failWith("the fleet did not start"))
    )
    const client = HttpClient.filterStatusOk(yield* HttpClient.HttpClient)
    const control = `http://127.0.0.1:${ready.controlPort}`
    return {
      port: ready.port,
      pid: child.pid,
      stats: client.get(`${control}/stats`).pipe(
        Effect.flatMap(HttpClientResponse.schemaBodyJson(FleetStats)),
        Effect.mapError(failWith("cannot read the fleet's stats"))
      ),
      reset: client.post(`${control}/reset`).pipe(
        Effect.asVoid,
        Effect.mapError(failWith("cannot reset the fleet's stats"))
      )
    }
  })
