/**
 * The fleet's own process, started by the link checking bench (`fleetMain.ts --links=<n> --growth-batches=<b>
 * --growth-links=<l> --growth-hosts=<h>`), so that serving the links does not share an event loop with the
 * measurements. It serves the one-batch plan of n links on its hosts and the growth plan (b batches of l links on h
 * hosts; none when b is 0) on its own,
 * writes its ports as one ready line on stdout, then answers `GET /stats` and `POST /reset` on a control port
 * until its stdin closes (the bench is gone) or it receives SIGTERM.
 */
import { HttpRouter, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Schema } from "effect"
import { createServer } from "node:http"
import { parseArgs } from "node:util"
import { BenchError } from "../benchError"
import { FleetReady, fleetReadyPrefix, FleetStats } from "./fleetProtocol"
import { type RunningFleet, serveFleet } from "./fleetServers"
import { makeGrowthPlan, makeLinkPlan, SMALL_FLEET_HOSTS } from "./linkPlan"

const { values: options } = parseArgs({
  options: {
    links: { type: "string" },
    "growth-batches": { type: "string" },
    "growth-links": { type: "string" },
    "growth-hosts": { type: "string" }
  },
  strict: true
})

const Count = Schema.NumberFromString.pipe(Schema.int(), Schema.nonNegative())
const Options = Schema.Struct({
  links: Count,
  "growth-batches": Count,
  "growth-links": Count,
  "growth-hosts": Count
})

const controlApp = (fleet: RunningFleet) =>
  HttpRouter.empty.pipe(
    HttpRouter.get("/stats", Effect.suspend(() => HttpServerResponse.schemaJson(FleetStats)(fleet.stats()))),
    HttpRouter.post("/reset", Effect.sync(() => {
      fleet.reset()
      return HttpServerResponse.empty({ status: 204 })
    }))
  )

const untilStdinCloses = Effect.async<void>((resume) => {
  process.stdin.once("close", () => resume(Effect.void))
  process.stdin.resume()
})

const program = Effect.gen(function*() {
  const counts = yield* Schema.decodeUnknown(Options)(options)
  const growth = counts["growth-batches"] === 0 ? [] : yield* makeGrowthPlan({
    batches: counts["growth-batches"],
    linksPerBatch: counts["growth-links"],
    hosts: counts["growth-hosts"]
  })
  const hosts = SMALL_FLEET_HOSTS + (counts["growth-batches"] === 0 ? 0 : counts["growth-hosts"])
  const fleet = yield* serveFleet([...(yield* makeLinkPlan(counts.links)), ...growth.flat()], hosts)
  const control = yield* NodeHttpServer.make(() => createServer(), { host: "127.0.0.1", port: 0 })
  yield* control.serve(controlApp(fleet))
  if (control.address._tag !== "TcpAddress") {
    return yield* new BenchError({ message: "the fleet's control server has no TCP address" })
  }
  const ready = yield* Schema.encode(Schema.parseJson(FleetReady))({ port: fleet.port, controlPort: control.address.port })
  yield* Console.log(`${fleetReadyPrefix}${ready}`)
  yield* untilStdinCloses
})

NodeRuntime.runMain(Effect.scoped(program))
