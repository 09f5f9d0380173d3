/**
 * Mixed-load soak: `npm run bench:soak` (see bench/README.md). The reference server serving all three services, under
 * autocannon on every route family at once (user.json, token refresh, list lookups, subscriptions, notifications,
 * link checks and batches) for two minutes, on PostgreSQL and on PGlite one after the other; each 10 s window's
 * requests, p50 and p99 per route, 5xx and the server's RSS go to stderr as it ends, the markdown report to stdout.
 */
import { FetchHttpClient } from "@effect/platform"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer } from "effect"
import * as Fs from "node:fs/promises"
import { availableParallelism, tmpdir } from "node:os"
import * as Path from "node:path"
import { failWith } from "./benchError"
import { startFleet } from "./linkcheck/fleet"
import { linkUri, makeLinkPlan } from "./linkcheck/linkPlan"
import { startReceiver } from "./linkcheck/receiver"
import { connections, FLEET_LINKS } from "./soak/mix"
import { renderBackend } from "./soak/report"
import { runBackend } from "./soak/backendRun"
import { backends, loadSettings } from "./soak/settings"
import { startChildServer } from "./sso/childServer"

const program = Effect.gen(function*() {
  const settings = yield* Effect.try({ try: loadSettings, catch: (error) => failWith(String(error))(error) })
  const links = yield* makeLinkPlan(FLEET_LINKS)
  const fleet = yield* startFleet(links.length, undefined)
  const receiver = yield* startReceiver([])
  const sink = yield* Effect.acquireRelease(
    Effect.promise(() => startChildServer<{ url: string }>("../alerts/sinkMain.ts")),
    (sink) => Effect.promise(() => sink.stop())
  )
  const logDirectory = yield* Effect.promise(() => Fs.mkdtemp(Path.join(tmpdir(), "civicstack-bench-soak-logs-")))
  const shared = { uris: links.map((link) => linkUri(link, fleet.port)), receiver, sinkUrl: sink.description.url, logDirectory }

  yield* Console.log([
    "## Mixed-load soak",
    "",
    `Node ${process.version}, ${availableParallelism()} CPUs; ${settings.seconds} s per backend, windows of ${settings.sampleSeconds} s; ` +
    `${Object.values(connections).reduce((sum, count) => sum + count, 0)} autocannon connections; notifications held to ` +
    `${settings.notificationRate}/s, batches to ${settings.batchRate}/s of ${settings.linksPerBatch} links.`,
    ""
  ].join("\n"))
  for (const backend of backends) {
    if (!settings.only.has(backend)) continue
    yield* Console.log(renderBackend(yield* runBackend(backend, settings, shared), settings))
  }
})

NodeRuntime.runMain(
  Effect.scoped(program).pipe(Effect.provide(Layer.merge(NodeContext.layer, FetchHttpClient.layer)))
)
