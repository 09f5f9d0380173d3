/**
 * The fleet's own process, started by the link checking bench (`fleetMain.ts --links=<n>`), so that serving the
 * links does not share an event loop with the measurements. It serves the plan of n links on the fleet's hosts,
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
import { makeLinkPlan } from "./linkPlan"

const { values: options } = parseArgs({ options: { links: { type: "string" } }, strict: true })

const LinkCount = Schema.NumberFromString.pipe(Schema.int(), Schema.positive())

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
  const count = yield* Schema.decodeUnknown(LinkCount)(options.links)
  const fleet = yield* serveFleet(yield* makeLinkPlan(count))
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
