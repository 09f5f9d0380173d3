/**
 * Start-up bench: `npm run bench:startup` (see bench/README.md). How long the built server takes from its process's
 * spawn to the first 200 on `/healthcheck/ready`, on the embedded database: on a new data directory, and restarted on
 * the same one. It runs `apps/server/dist/cli.js` (run `npm run build` first) with the heap limit `civicstack` sets,
 * alternating the two cases round by round. Progress goes to stderr, the markdown table to stdout.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { percentileOfSorted } from "./percentile"
import { freeLoopbackPort } from "./serverLaunch"

const rounds = Number(process.env.BENCH_STARTUP_ROUNDS ?? 5)
if (!Number.isInteger(rounds) || rounds < 1) throw new Error("BENCH_STARTUP_ROUNDS must be a whole number of at least 1")
const builtCli = fileURLToPath(new URL("../../apps/server/dist/cli.js", import.meta.url))

const progress = (message: string) => process.stderr.write(`${message}\n`)

const exited = (child: ChildProcess) => new Promise<void>((resolve) => child.once("exit", () => resolve()))

/** Milliseconds from spawn to the first 200 on `/healthcheck/ready`; the server is stopped with SIGTERM after. */
const timeToReady = async (dataDir: string) => {
  const port = await freeLoopbackPort()
  const startedAt = performance.now()
  const child = spawn(process.execPath, ["--max-old-space-size=256", builtCli, "serve"], {
    env: { PATH: process.env.PATH ?? "", HOST: "127.0.0.1", PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: "warning" },
    stdio: "ignore"
  })
  const gone = exited(child)
  try {
    while (true) {
      if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode} before it was ready`)
      const ready = await fetch(`http://127.0.0.1:${port}/healthcheck/ready`).then((response) => response.status === 200, () => false)
      if (ready) return performance.now() - startedAt
      if (performance.now() - startedAt > 60_000) throw new Error("the server was not ready within 60 s")
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  } finally {
    child.kill("SIGTERM")
    await gone
  }
}

await Fs.access(builtCli).catch(() => {
  throw new Error(`${builtCli} is missing: run npm run build first`)
})
const times = { "new data directory": [] as Array<number>, "restart on the same one": [] as Array<number> }
for (let round = 1; round <= rounds; round++) {
  const dataDir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "civicstack-startup-"))
  try {
    times["new data directory"].push(await timeToReady(dataDir))
    times["restart on the same one"].push(await timeToReady(dataDir))
  } finally {
    await Fs.rm(dataDir, { recursive: true, force: true })
  }
  progress(`round ${round}/${rounds}: new ${Math.round(times["new data directory"].at(-1)!)} ms, restart ${Math.round(times["restart on the same one"].at(-1)!)} ms`)
}

const targets = { "new data directory": 6000, "restart on the same one": 3000 }
console.log(`Start-up of the built server on the embedded database, ${rounds} rounds, ${Os.cpus().length} CPUs, load average ${Os.loadavg()[0]!.toFixed(2)} at the end\n`)
console.log("| case | median, ms | fastest, ms | slowest, ms | target, ms |")
console.log("|---|---:|---:|---:|---:|")
for (const [label, measured] of Object.entries(times)) {
  const sorted = Float64Array.from(measured).sort()
  console.log(`| ${label} | ${Math.round(percentileOfSorted(sorted, 50)!)} | ${Math.round(sorted[0]!)} | ${Math.round(sorted[sorted.length - 1]!)} | ${targets[label as keyof typeof targets]} |`)
}
