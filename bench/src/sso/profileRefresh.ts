/**
 * Profiling aid (not part of the bench table): the reference server on a fresh PostgreSQL database under refresh
 * grants, with CPU time of the server, PostgreSQL's processes and this process over the load.
 * PGLITE=1 runs it on PGlite in a temporary DATA_DIR instead. PROFILE_DIR=<dir> starts the server with --cpu-prof into it; SERVER_NODE_FLAGS adds more Node flags (space-separated).
 */
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { Effect, Exit, Scope } from "effect"
import { freshDatabase } from "../freshDatabase"
import { serverMallocEnv } from "../serverLaunch"
import { benchApplication, writeBootstrap } from "./bootstrap"
import { cpuSecondsOf } from "../procCpu"
import { postgresCpuSecondsSince, readPostgresCpu } from "./cpu"
import { runLoad } from "./load"
import { obtainRefreshTokens } from "./refreshPool"

const pool = Number(process.env.POOL ?? 3000)
const seconds = Number(process.env.SECONDS ?? 10)
const connections = Number(process.env.CONNECTIONS ?? 64)
const profileDir = process.env.PROFILE_DIR

const serverPackage = dirname(createRequire(import.meta.url).resolve("@civicstack/server/package.json"))
const scope = Effect.runSync(Scope.make())
const onPglite = process.env.PGLITE === "1"
const storage = onPglite
  ? { DATA_DIR: mkdtempSync(join(tmpdir(), "ssoprof-")) }
  : {
    DATABASE_URL:
      (await Effect.runPromise(Scope.extend(freshDatabase("postgres://postgres@127.0.0.1:5432/postgres", "ssoprof"), scope))).url
  }
const bootstrap = await writeBootstrap(10)
const port = 3900 + Math.floor(Math.random() * 90)
const url = `http://127.0.0.1:${port}`
const child = spawn(process.execPath, [
  "--max-old-space-size=256",
  ...(profileDir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${profileDir}`]),
  ...(process.env.SERVER_NODE_FLAGS?.split(" ").filter((flag) => flag !== "") ?? []),
  join(serverPackage, "dist", "cli.js"),
  "serve"
], {
  cwd: dirname(dirname(serverPackage)),
  env: {
    PATH: process.env.PATH ?? "",
    ...serverMallocEnv(),
    HOST: "127.0.0.1",
    PORT: String(port),
    SSO_ISSUER: url,
    SERVICES: "sso",
    LOG_LEVEL: "warning",
    SHUTDOWN_GRACE_SECONDS: "5",
    CIVICSTACK_BOOTSTRAP: bootstrap.file,
    ...storage
  },
  stdio: ["ignore", "inherit", "inherit"]
})
const exited = new Promise((resolve) => child.once("exit", resolve))
for (;;) {
  const ready = await fetch(`${url}/healthcheck/ready`).then((r) => r.status === 200, () => false)
  if (ready) break
  await new Promise((resolve) => setTimeout(resolve, 200))
}
const tokens = await obtainRefreshTokens(url, pool, 8, () => {})
const requests = tokens.map((token) => ({
  method: "POST" as const,
  path: "/oauth/token",
  headers: { "content-type": "application/x-www-form-urlencoded" },
  body: new URLSearchParams({
    grant_type: "refresh_token",
    refresh_token: token,
    client_id: benchApplication.clientId,
    client_secret: benchApplication.clientSecret
  }).toString()
}))
// warm-up on a fifth
const warm = Math.floor(requests.length / 5)
await runLoad({ url, connections, seconds: 2, requests: requests.slice(0, warm), use: "single-use" })
// ALLOC_SIGNAL=1: SIGUSR2 to the server around the load (for a preload that profiles allocations between them)
const signalServer = () => process.env.ALLOC_SIGNAL === "1" && child.kill("SIGUSR2")
signalServer()
const before = { server: cpuSecondsOf(child.pid!), pg: readPostgresCpu(), self: process.cpuUsage(), at: performance.now() }
const loadStart = process.hrtime.bigint() / 1000n
const result = await runLoad({ url, connections, seconds, requests: requests.slice(warm), use: "single-use" })
const loadEnd = process.hrtime.bigint() / 1000n
signalServer()
await new Promise((resolve) => setTimeout(resolve, 1000))
const wall = (performance.now() - before.at) / 1000
const self = process.cpuUsage(before.self)
const server = cpuSecondsOf(child.pid!) - before.server
const pg = postgresCpuSecondsSince(before.pg)
const n = result.requests
const report = {
  requests: n,
  rps: Math.round(result.requestsPerSecond),
  p99: result.p99Ms,
  non2xx: result.non2xx,
  wall: wall.toFixed(2),
  window: [String(loadStart), String(loadEnd)],
  cpuMsPerRequest: {
    server: (server * 1000 / n).toFixed(3),
    postgres: (pg * 1000 / n).toFixed(3),
    loadGenerator: ((self.user + self.system) / 1000 / n).toFixed(3)
  }
}
console.log(JSON.stringify(report))
child.kill("SIGTERM")
await exited
await bootstrap.remove()
if ("DATA_DIR" in storage) rmSync(storage.DATA_DIR, { recursive: true, force: true })
await Effect.runPromise(Scope.close(scope, Exit.void))
