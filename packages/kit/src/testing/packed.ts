import { afterAll, beforeAll, expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { builtSinceLastChange } from "./freshBuild"

const run = promisify(execFile)
const monorepoModules = fileURLToPath(new URL("../../../../node_modules", import.meta.url))

/** The modules that built code or declarations import by name: what is not bundled. */
export const importedModules = (code: string) =>
  [...code.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s*['"]([^'"]+)['"]/g)].map((match) => match[1]!)

/**
 * A package as a project outside the monorepo gets it: built from the current sources (unless its build is newer than
 * them) and packed, before the tests of the file; the tarball and an empty project are removed after them.
 */
export const packedPackage = (packageDirectory: string) => {
  let project = ""
  let tarball = ""
  beforeAll(async () => {
    project = await Fs.mkdtemp(Path.join(Os.tmpdir(), `${Path.basename(packageDirectory)}-install-`))
    if (!(await builtSinceLastChange(packageDirectory))) await run("npm", ["run", "build"], { cwd: packageDirectory })
    const packed = await run("npm", ["pack", "--json", "--pack-destination", project], { cwd: packageDirectory })
    tarball = Path.join(project, (JSON.parse(packed.stdout) as Array<{ filename: string }>)[0]!.filename)
    await Fs.writeFile(Path.join(project, "package.json"), JSON.stringify({ name: "client-app", private: true }))
  }, 180_000)
  afterAll(() => Fs.rm(project, { recursive: true, force: true }))

  return {
    /** The files in the tarball, `package/` first. */
    files: async () => (await run("tar", ["-tzf", tarball])).stdout.trim().split("\n").sort(),
    /** The package.json in the tarball. */
    manifest: async () => JSON.parse((await run("tar", ["-xzOf", tarball, "package/package.json"])).stdout) as Record<string, unknown>,
    /** Every package npm would install with the tarball and `others` (specifiers such as `effect@3.22`), by name. */
    resolvedWith: async (others: ReadonlyArray<string>) => {
      await run("npm", ["install", "--package-lock-only", "--no-audit", "--no-fund", tarball, ...others], { cwd: project })
      const lock = JSON.parse(await Fs.readFile(Path.join(project, "package-lock.json"), "utf8")) as {
        packages: Record<string, unknown>
      }
      return Object.keys(lock.packages).map((path) => path.replace(/^.*node_modules\//, ""))
    },
    /**
     * Runs an ES module script in the project with only the unpacked package and `beside` (linked from the
     * monorepo's node_modules) installed; answers what it printed.
     */
    runBeside: async (beside: ReadonlyArray<string>, script: string) => {
      const modules = Path.join(project, "node_modules")
      const name = (await run("tar", ["-xzOf", tarball, "package/package.json"]).then(({ stdout }) => JSON.parse(stdout).name)) as string
      const unpacked = Path.join(modules, name)
      await Fs.rm(modules, { recursive: true, force: true })
      await Fs.mkdir(unpacked, { recursive: true })
      await run("tar", ["-xzf", tarball, "-C", unpacked, "--strip-components=1"])
      for (const module of beside) {
        await Fs.mkdir(Path.dirname(Path.join(modules, module)), { recursive: true })
        await Fs.symlink(Path.join(monorepoModules, module), Path.join(modules, module))
      }
      return (await run(process.execPath, ["--input-type=module", "-e", script], { cwd: project })).stdout.trim()
    }
  }
}

export interface InstallExpectations {
  /** What a project installs beside the package, by npm specifier (`effect@3.22`). */
  readonly peers: ReadonlyArray<string>
  /** Packages the install must not bring besides the kit (which none may): the service's core, database drivers. */
  readonly unwanted: ReadonlyArray<string>
  /** An ES module that imports the package and prints what shows it works. */
  readonly script: string
  /** What the script prints. */
  readonly printed: string
}

/**
 * The tests every published package passes, inside the caller's `describe`: packed, it installs with its peers and
 * brings neither the kit nor anything `unwanted`, and `script` runs with only the peers beside it. Answers the packed
 * package, for more tests.
 */
export const installsOnItsOwn = (packageDirectory: string, expected: InstallExpectations) => {
  const packed = packedPackage(packageDirectory)
  const peerNames = expected.peers.map((specifier) => specifier.replace(/(.)@.*$/, "$1"))
  const unwanted = ["@civicstack/kit", ...expected.unwanted]

  it(`brings ${peerNames.join(" and ")}, and none of ${unwanted.join(", ")}`, { timeout: 120_000 }, async () => {
    const installed = await packed.resolvedWith(expected.peers)
    expect(installed).toEqual(expect.arrayContaining(peerNames))
    for (const name of unwanted) expect(installed).not.toContain(name)
  })

  it(`loads and works with only ${peerNames.join(" and ")} beside it`, { timeout: 60_000 }, async () => {
    expect(await packed.runBeside(peerNames, expected.script)).toBe(expected.printed)
  })

  return packed
}

/** What an SDK installs beside it: nothing of its service, only these. */
export const SDK_PEERS = ["effect@3.22", "@effect/platform@0.97"]
