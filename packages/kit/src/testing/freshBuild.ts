import * as Fs from "node:fs/promises"
import * as Path from "node:path"

/** The modification times of the files at `paths`, folders walked; missing paths have none. */
const changeTimes = async (paths: ReadonlyArray<string>): Promise<Array<number>> => {
  const times = await Promise.all(paths.map(async (path) => {
    const stats = await Fs.stat(path).catch(() => undefined)
    if (stats === undefined) return []
    if (!stats.isDirectory()) return [stats.mtimeMs]
    const entries = await Fs.readdir(path)
    return changeTimes(entries.map((entry) => Path.join(path, entry)))
  }))
  return times.flat()
}

/**
 * What a package's build reads: its sources, manifest and build settings, the monorepo's shared build settings, and
 * the sources of every package beside it (the kit and contracts are built in from theirs).
 */
const buildInputs = async (packageDirectory: string) => {
  const packages = Path.dirname(packageDirectory)
  const root = Path.dirname(packages)
  const siblings = await Fs.readdir(packages)
  return [
    ...siblings.map((sibling) => Path.join(packages, sibling, "src")),
    ...["package.json", "tsup.config.ts", "tsconfig.json"].map((file) => Path.join(packageDirectory, file)),
    ...["tsup.package.ts", "tsconfig.base.json"].map((file) => Path.join(root, file))
  ]
}

/**
 * Whether the package's `dist` was built after the last change to anything its build reads, as CI's `npm run build`
 * before the tests leaves it: packing it then packs what a build would make.
 */
export const builtSinceLastChange = async (packageDirectory: string) => {
  const built = await changeTimes([Path.join(packageDirectory, "dist")])
  if (built.length === 0) return false
  const inputs = await changeTimes(await buildInputs(packageDirectory))
  return Math.max(...inputs) < Math.min(...built)
}
