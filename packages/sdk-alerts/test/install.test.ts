import { execFile } from "node:child_process"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const run = promisify(execFile)
const sdkDirectory = fileURLToPath(new URL("..", import.meta.url))
const monorepoModules = fileURLToPath(new URL("../../../node_modules", import.meta.url))

/** What the built files import: only these may be named, the rest is bundled. */
const isPeerModule = (specifier: string) => /^(effect|@effect\/platform)(\/|$)/.test(specifier)
const importedModules = (code: string) =>
  [...code.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s*['"]([^'"]+)['"]/g)].map((match) => match[1]!)

/**
 * The SDK as a client app installs it: built from the current sources, packed, and installed from the tarball into an
 * empty project (the registry resolves its dependencies).
 */
describe("installing the packed SDK", () => {
  let project: string
  let tarball: string
  beforeAll(async () => {
    project = await Fs.mkdtemp(Path.join(Os.tmpdir(), "sdk-alerts-install-"))
    await run("npm", ["run", "build"], { cwd: sdkDirectory })
    const packed = await run("npm", ["pack", "--json", "--pack-destination", project], { cwd: sdkDirectory })
    tarball = Path.join(project, (JSON.parse(packed.stdout) as Array<{ filename: string }>)[0]!.filename)
    await Fs.writeFile(Path.join(project, "package.json"), JSON.stringify({ name: "client-app", private: true }))
  }, 180_000)
  afterAll(() => Fs.rm(project, { recursive: true, force: true }))

  it("ships JavaScript and declarations that import nothing but effect and @effect/platform", async () => {
    for (const file of ["index.js", "index.d.ts"]) {
      const code = await Fs.readFile(Path.join(sdkDirectory, "dist", file), "utf8")
      const modules = importedModules(code)
      expect(modules.length).toBeGreaterThan(0)
      expect(modules.filter((specifier) => !isPeerModule(specifier))).toEqual([])
    }
  })

  it("brings effect and @effect/platform, and nothing of the service: no core, jobs or @effect/sql", { timeout: 120_000 }, async () => {
    await run("npm", ["install", "--package-lock-only", "--no-audit", "--no-fund", tarball, "effect@3.22", "@effect/platform@0.97"], {
      cwd: project
    })
    const lock = JSON.parse(await Fs.readFile(Path.join(project, "package-lock.json"), "utf8")) as {
      packages: Record<string, unknown>
    }
    const installed = Object.keys(lock.packages).map((path) => path.replace(/^.*node_modules\//, ""))
    expect(installed).toEqual(expect.arrayContaining(["@civicstack/sdk-alerts", "effect", "@effect/platform"]))
    for (const unwanted of ["@civicstack/core-alerts", "@civicstack/jobs", "@effect/sql", "@effect/sql-pg"]) {
      expect(installed).not.toContain(unwanted)
    }
  })

  it("loads and builds a client with only effect and @effect/platform beside it", { timeout: 60_000 }, async () => {
    const modules = Path.join(project, "node_modules")
    const sdk = Path.join(modules, "@civicstack", "sdk-alerts")
    await Fs.mkdir(sdk, { recursive: true })
    await run("tar", ["-xzf", tarball, "-C", sdk, "--strip-components=1"])
    await Fs.mkdir(Path.join(modules, "@effect"), { recursive: true })
    await Fs.symlink(Path.join(monorepoModules, "effect"), Path.join(modules, "effect"))
    await Fs.symlink(Path.join(monorepoModules, "@effect", "platform"), Path.join(modules, "@effect", "platform"))
    const script = [
      "const sdk = await import('@civicstack/sdk-alerts')",
      "const client = sdk.createAlertsClient({ baseUrl: 'http://127.0.0.1:9' })",
      "const refusal = await client.getList('').catch((error) => error)",
      "await client.close()",
      "console.log(typeof client.findOrCreateList, typeof sdk.AlertsApi, refusal.name, refusal.status)"
    ].join(";")
    const loaded = await run(process.execPath, ["--input-type=module", "-e", script], { cwd: project })
    expect(loaded.stdout.trim()).toBe("function function UnprocessableEntityError 422")
  })
})
