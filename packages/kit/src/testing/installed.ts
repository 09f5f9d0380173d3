import { afterAll, beforeAll, expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { promisify } from "node:util"
import { packedOnce, tarballDirectory } from "./tarballs"
import { type CivicstackPackage, type Manifest, neededNames, readManifest, withCivicstackNeeds } from "./workspacePackages"

const run = promisify(execFile)

/** Installed by no published package, whoever asks. */
const NEVER_INSTALLED = ["@civicstack/kit", "vitest", "@effect/vitest", "tsup", "typescript"]

interface LockEntry {
  readonly name: string
  readonly resolved?: string
  readonly dependencies?: Record<string, string>
  readonly optionalDependencies?: Record<string, string>
  readonly peerDependencies?: Record<string, string>
}

/** What npm installed in the project, by its lockfile: one entry for each copy. */
const lockedPackages = async (project: string): Promise<ReadonlyArray<LockEntry>> => {
  const lock = JSON.parse(await Fs.readFile(Path.join(project, "package-lock.json"), "utf8")) as {
    packages: Record<string, Omit<LockEntry, "name"> & { readonly name?: string }>
  }
  return Object.entries(lock.packages).flatMap(([path, entry]) =>
    path === "" ? [] : [{ ...entry, name: entry.name ?? path.replace(/^.*node_modules\//, "") }]
  )
}

/** Every package installed, by name, with the names of the installed packages that require it. */
const requirersByName = (locked: ReadonlyArray<LockEntry>) => {
  const requirers = new Map(locked.map(({ name }) => [name, new Set<string>()]))
  for (const entry of locked) {
    const required = { ...entry.dependencies, ...entry.optionalDependencies, ...entry.peerDependencies }
    for (const name of Object.keys(required)) requirers.get(name)?.add(entry.name)
  }
  return requirers
}

/**
 * What the project got only because a civicstack package was developed with it: a package of the set's
 * `devDependencies` that none of the set needs, installed and required by none but civicstack packages, or one that
 * no published package may bring at all.
 */
const developmentPackagesIn = (installed: Map<string, Set<string>>, set: ReadonlyArray<Manifest>) => {
  const civicstack = new Set(set.map(({ name }) => name))
  const needed = new Set(set.flatMap(neededNames))
  const developmentOnly = new Set(
    set.flatMap(({ devDependencies }) => Object.keys(devDependencies ?? {})).filter((name) => !needed.has(name))
  )
  const broughtByOthers = (name: string) => [...installed.get(name)!].some((requirer) => !civicstack.has(requirer))
  return [...installed.keys()].filter((name) =>
    NEVER_INSTALLED.includes(name) || (developmentOnly.has(name) && !broughtByOthers(name))
  )
}

/** The files an entry of `exports` names for a project: every target but the workspace's own source condition. */
const exportedFiles = (exports: Manifest["exports"]): ReadonlyArray<string> =>
  Object.entries(exports ?? {}).flatMap(([condition, target]) =>
    condition === "@civicstack/source" ? [] : typeof target === "string" ? [target] : exportedFiles(target as Manifest["exports"])
  )

/** The import specifiers of the package's entry points (`@civicstack/x`, `@civicstack/x/api`). */
const entrySpecifiers = ({ exports, name }: Manifest) =>
  Object.keys(exports ?? { ".": "" }).map((entry) => `${name}${entry.slice(1)}`)

export interface InstalledProject {
  /** The empty project the tarballs were installed into. */
  readonly directory: string
  /** The civicstack packages installed from tarballs: the package first. */
  readonly packages: ReadonlyArray<CivicstackPackage>
  /** Runs an ES module script with Node in the project; answers what it printed. */
  readonly runScript: (script: string) => Promise<string>
}

/**
 * Before the file's tests: the package and the civicstack packages it needs are built and packed (once in the test
 * run), and their tarballs installed with `npm install` into an empty project, which is removed after the tests.
 */
export const installedWithItsCivicstackNeeds = (packageDirectory: string) => {
  const tarballs = tarballDirectory()
  let project: InstalledProject | undefined
  let projectDirectory: string | undefined
  beforeAll(async () => {
    const packages = await withCivicstackNeeds(packageDirectory)
    const packed = await Promise.all(packages.map(({ directory }) => packedOnce(directory, tarballs)))
    const directory = await Fs.mkdtemp(Path.join(Os.tmpdir(), `${Path.basename(packageDirectory)}-installed-`))
    projectDirectory = directory
    await Fs.writeFile(Path.join(directory, "package.json"), JSON.stringify({ name: "client-app", private: true, type: "module" }))
    await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", ...packed], { cwd: directory })
    const runScript = async (script: string) =>
      (await run(process.execPath, ["--input-type=module", "-e", script], { cwd: directory })).stdout.trim()
    project = { directory, packages, runScript }
  }, 300_000)
  afterAll(() => projectDirectory && Fs.rm(projectDirectory, { recursive: true, force: true }))

  return () => {
    if (project === undefined) throw new Error("the project is installed before the tests, in beforeAll")
    return project
  }
}

export interface WorkingInstall {
  /** An ES module that imports the package from the project and prints what shows it works. */
  readonly script: string
  /** What the script prints. */
  readonly printed: string
}

/**
 * The tests every published package passes, inside the caller's `describe`: installed from its tarball with those
 * of the civicstack packages it needs, it brings no development dependency, ships every file its `exports` name,
 * loads each entry point, and `script` prints `printed`. Answers the installed project, for more tests.
 */
export const installsWithItsCivicstackNeeds = (packageDirectory: string, expected: WorkingInstall) => {
  const installed = installedWithItsCivicstackNeeds(packageDirectory)

  it("takes every civicstack package from the tarballs beside it", async () => {
    const { directory, packages } = installed()
    const civicstack = (await lockedPackages(directory)).filter(({ name }) => name.startsWith("@civicstack/"))
    expect(civicstack.map(({ name }) => name).sort()).toEqual(packages.map(({ manifest }) => manifest.name).sort())
    for (const { name, resolved } of civicstack) {
      expect({ name, resolved }).toEqual({ name, resolved: expect.stringMatching(/^file:.*\.tgz$/) })
    }
  })

  it("brings no package it is only developed with", async () => {
    const { directory, packages } = installed()
    const installedNames = requirersByName(await lockedPackages(directory))
    expect(developmentPackagesIn(installedNames, packages.map(({ manifest }) => manifest))).toEqual([])
  })

  it("ships every file its exports name, and each entry point loads", { timeout: 60_000 }, async () => {
    const { directory, packages: [own] } = installed()
    const shipped = Path.join(directory, "node_modules", own!.manifest.name)
    const manifest = await readManifest(shipped)
    const files = exportedFiles(manifest.exports)
    expect(files.length).toBeGreaterThan(0)
    const missing = []
    for (const file of files) {
      if (!(await Fs.stat(Path.join(shipped, file)).then(() => true, () => false))) missing.push(file)
    }
    expect(missing).toEqual([])
    const entries = entrySpecifiers(manifest)
    const script = `for (const entry of ${JSON.stringify(entries)}) console.log(entry, Object.keys(await import(entry)).length > 0)`
    expect(await installed().runScript(script)).toBe(entries.map((entry) => `${entry} true`).join("\n"))
  })

  it("works as a project uses it", { timeout: 60_000 }, async () => {
    expect(await installed().runScript(expected.script)).toBe(expected.printed)
  })

  return installed
}
