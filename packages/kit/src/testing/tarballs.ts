import { execFile } from "node:child_process"
import * as FsSync from "node:fs"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { promisify } from "node:util"
import { afterAll, inject } from "vitest"
import { builtSinceLastChange } from "./freshBuild"

const run = promisify(execFile)

declare module "vitest" {
  export interface ProvidedContext {
    /** Where the test run keeps the tarballs it packed (see `tarballsSetup.ts`). */
    civicstackTarballs?: string
  }
}

/**
 * The run's folder of tarballs, shared by every test file; without the global setup that provides it, one of the test
 * file's own, removed after its tests. Called while the file's tests are collected.
 */
export const tarballDirectory = (): string => {
  const shared = inject("civicstackTarballs")
  if (shared !== undefined) return shared
  const own = FsSync.mkdtempSync(Path.join(Os.tmpdir(), "civicstack-tarballs-"))
  afterAll(() => Fs.rm(own, { recursive: true, force: true }))
  return own
}

type Outcome = { readonly tarball: string } | { readonly failure: string }

const WAIT_STEP_MS = 250
const LONGEST_WAIT_MS = 300_000

const outcomeIn = async (file: string): Promise<Outcome> => {
  for (let waited = 0; waited < LONGEST_WAIT_MS; waited += WAIT_STEP_MS) {
    const text = await Fs.readFile(file, "utf8").catch(() => undefined)
    if (text !== undefined) return JSON.parse(text) as Outcome
    await new Promise((resolve) => setTimeout(resolve, WAIT_STEP_MS))
  }
  return { failure: `no tarball in ${file} after ${LONGEST_WAIT_MS / 1000} s` }
}

const buildAndPack = async (packageDirectory: string, destination: string): Promise<Outcome> => {
  try {
    if (!(await builtSinceLastChange(packageDirectory))) await run("npm", ["run", "build"], { cwd: packageDirectory })
    const packed = await run("npm", ["pack", "--json", "--pack-destination", destination], { cwd: packageDirectory })
    const [{ filename }] = JSON.parse(packed.stdout) as [{ filename: string }]
    return { tarball: Path.join(destination, filename) }
  } catch (error) {
    return { failure: `${packageDirectory} does not build and pack: ${String(error)}` }
  }
}

/**
 * The package built from its current sources (unless its build is newer than them) and packed into `directory`, once
 * in the test run: the first test file to ask claims it (making a folder is atomic across the processes of the run)
 * and records the outcome; the others wait for it.
 */
export const packedOnce = async (packageDirectory: string, directory: string): Promise<string> => {
  const key = Path.basename(packageDirectory)
  const outcomeFile = Path.join(directory, `${key}.json`)
  const claimed = await Fs.mkdir(Path.join(directory, `${key}.claim`)).then(() => true, () => false)
  let outcome: Outcome
  if (claimed) {
    outcome = await buildAndPack(packageDirectory, directory)
    await Fs.writeFile(`${outcomeFile}.partial`, JSON.stringify(outcome))
    await Fs.rename(`${outcomeFile}.partial`, outcomeFile)
  } else {
    outcome = await outcomeIn(outcomeFile)
  }
  if ("failure" in outcome) throw new Error(outcome.failure)
  return outcome.tarball
}
