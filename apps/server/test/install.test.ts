/**
 * The server as ops install it on a host: packed from this checkout, installed with `npm i -g` into a prefix of its
 * own from the tarball and the registry alone, and run from there.
 */
import { execFile } from "node:child_process"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startCli, stop, waitUntilReady } from "./serverProcess"

const run = promisify(execFile)
const serverDirectory = fileURLToPath(new URL("..", import.meta.url))
interface Manifest {
  readonly version: string
  readonly dependencies?: Record<string, string>
  readonly devDependencies: Record<string, string>
}
const manifestOf = async (directory: string) =>
  JSON.parse(await Fs.readFile(Path.join(directory, "package.json"), "utf8")) as Manifest
const serverManifest = await manifestOf(serverDirectory)

let scratch = ""
let tarball = ""
const prefix = () => Path.join(scratch, "global")
const civicstack = () => Path.join(prefix(), "bin", "civicstack")
const installed = () => Path.join(prefix(), "lib", "node_modules", "@civicstack", "server")

beforeAll(async () => {
  scratch = await Fs.mkdtemp(Path.join(Os.tmpdir(), "civicstack-server-install-"))
  await run("npm", ["run", "build"], { cwd: serverDirectory })
  const packed = await run("npm", ["pack", "--json", "--pack-destination", scratch], { cwd: serverDirectory })
  tarball = Path.join(scratch, (JSON.parse(packed.stdout) as Array<{ filename: string }>)[0]!.filename)
  await run("npm", ["install", "--global", "--prefix", prefix(), "--no-audit", "--no-fund", tarball], { cwd: scratch })
}, 240_000)
afterAll(() => Fs.rm(scratch, { recursive: true, force: true }))

/** Every package under `directory`'s node_modules, by name. */
const packagesUnder = async (directory: string): Promise<ReadonlyArray<string>> => {
  const modules = Path.join(directory, "node_modules")
  const entries = await Fs.readdir(modules).catch(() => [] as Array<string>)
  const names = await Promise.all(entries.filter((entry) => !entry.startsWith(".")).map(async (entry) =>
    entry.startsWith("@") ? (await Fs.readdir(Path.join(modules, entry))).map((name) => `${entry}/${name}`) : [entry]
  ))
  return names.flat()
}

describe("the packed server", () => {
  it("holds the built command and the embedded database's scripts, and no sources or tests", async () => {
    const files = (await run("tar", ["-tzf", tarball])).stdout.trim().split("\n").map((file) => file.replace(/^package\//, ""))
    expect(files.sort()).toEqual([
      "README.md",
      "bin/civicstack.js",
      "dist/cli.js",
      "package.json",
      "scripts/create-data-directory.mjs",
      "scripts/pglite-worker.mjs"
    ])
  })

  it("depends on every package the workspace packages built into it depend on, at their versions", async () => {
    // a dependency of a built-in package that the server does not list would be bundled into dist/cli.js, where
    // CommonJS packages that require Node's modules fail at start
    const workspace = Path.join(serverDirectory, "..", "..", "packages")
    const builtIn = (await Fs.readdir(workspace)).filter((name) => !name.startsWith("sdk-"))
    const missing: Array<string> = []
    for (const name of builtIn) {
      const manifest = await manifestOf(Path.join(workspace, name)).catch(() => undefined)
      for (const [dependency, version] of Object.entries(manifest?.dependencies ?? {})) {
        if (dependency.startsWith("@civicstack/")) continue
        const listed = serverManifest.dependencies?.[dependency]
        if (listed !== version.replace(/^\^/, "") && listed !== version) missing.push(`${dependency}@${version} (of ${name})`)
      }
    }
    expect(missing).toEqual([])
  })

  it("installs from the registry without the workspace packages (built in) or any development dependency", async () => {
    const brought = await packagesUnder(installed())
    expect(brought).toEqual(expect.arrayContaining(["effect", "@electric-sql/pglite", "pg"]))
    // a development dependency of ours may still come as a dependency of a package the server needs (effect's fast-check)
    const neededByInstalled = new Set((await Promise.all(brought.map(async (name) => {
      const manifest = JSON.parse(await Fs.readFile(Path.join(installed(), "node_modules", name, "package.json"), "utf8"))
      return Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies, ...manifest.peerDependencies })
    }))).flat())
    const devOnly = [...Object.keys(serverManifest.devDependencies), "tsx", "vitest", "typescript", "tsup"]
      .filter((name) => !neededByInstalled.has(name))
    expect(devOnly).toEqual(expect.arrayContaining(["@civicstack/core-sso", "playwright-core", "tsx"]))
    expect(brought.filter((name) => devOnly.includes(name))).toEqual([])
  })

  it("prints its version", async () => {
    const { stdout } = await run(civicstack(), ["--version"])
    expect(stdout.trim()).toBe(serverManifest.version)
  })

  it("serves on the embedded database from the installed command, and stops on SIGTERM with 0", { timeout: 90_000 }, async () => {
    const dataDir = Path.join(scratch, "data")
    const server = await startCli(["serve"], { DATA_DIR: dataDir, LOG_LEVEL: "warning" }, civicstack())
    try {
      await waitUntilReady(server, 60_000)
      const ready = await fetch(`${server.url}/healthcheck/ready`)
      expect(await ready.json()).toMatchObject({ status: "ok", database: "ok" })
      const discovery = await fetch(`${server.url}/.well-known/openid-configuration`)
      expect(discovery.status).toBe(200)
      const metrics = await (await fetch(`${server.url}/metrics`)).text()
      expect(metrics).toMatch(/^http_server_requests_total\{method="GET",route="\/\.well-known\/openid-configuration",status="200"/m)
      expect(metrics).toMatch(/^process_resident_memory_bytes\{/m)
    } finally {
      expect(await stop(server)).toBe(0)
    }
  })
})
