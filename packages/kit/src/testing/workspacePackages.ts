import * as Fs from "node:fs/promises"
import * as Path from "node:path"

export interface Manifest {
  readonly name: string
  readonly private?: boolean
  readonly exports?: Record<string, unknown>
  readonly dependencies?: Record<string, string>
  readonly peerDependencies?: Record<string, string>
  readonly devDependencies?: Record<string, string>
}

export const readManifest = async (packageDirectory: string) =>
  JSON.parse(await Fs.readFile(Path.join(packageDirectory, "package.json"), "utf8")) as Manifest

/** The names a package needs installed beside it: its dependencies and peer dependencies. */
export const neededNames = (manifest: Manifest) =>
  [...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {})]

const isCivicstack = (name: string) => name.startsWith("@civicstack/")

/** The workspace packages beside `packageDirectory` (in the same folder), by name. */
const siblingPackages = async (packageDirectory: string) => {
  const parent = Path.dirname(packageDirectory)
  const found = new Map<string, { readonly directory: string; readonly manifest: Manifest }>()
  for (const entry of await Fs.readdir(parent, { withFileTypes: true })) {
    const directory = Path.join(parent, entry.name)
    if (!entry.isDirectory()) continue
    const manifest = await readManifest(directory).catch(() => undefined)
    if (manifest !== undefined) found.set(manifest.name, { directory, manifest })
  }
  return found
}

export interface CivicstackPackage {
  readonly directory: string
  readonly manifest: Manifest
}

/**
 * The package and every civicstack package it needs, directly or through another: what a project must be given as
 * tarballs, since none of them comes from the registry. A need of a private package is an error: it cannot be
 * installed, and must be bundled in instead.
 */
export const withCivicstackNeeds = async (packageDirectory: string): Promise<ReadonlyArray<CivicstackPackage>> => {
  const workspace = await siblingPackages(packageDirectory)
  const own = await readManifest(packageDirectory)
  const needed = new Map<string, CivicstackPackage>([[own.name, { directory: packageDirectory, manifest: own }]])
  const pending = [own]
  for (let manifest = pending.pop(); manifest !== undefined; manifest = pending.pop()) {
    for (const name of neededNames(manifest).filter(isCivicstack)) {
      if (needed.has(name)) continue
      const found = workspace.get(name)
      if (found === undefined) throw new Error(`${manifest.name} needs ${name}, which is not a package of the workspace`)
      if (found.manifest.private === true) throw new Error(`${manifest.name} needs the private ${name}, which no project can install`)
      needed.set(name, found)
      pending.push(found.manifest)
    }
  }
  return [...needed.values()]
}
