import { execFile } from "node:child_process"
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

let ownDirectory: Promise<string> | undefined

/**
 * The run's folder of tarballs, shared by every test file; without the global setup that provides it, one of this
 * file's own, removed after it.
 */
export const tarballDirectory = (): Promise<string> => {
  const shared = inject("civicstackTarballs")
  if (shared !== undefined) return Promise.resolve(shared)
  if (ownDirectory === undefined) {
    const made = Fs.mkdtemp(Path.join(Os.tmpdir(), "civicstack-tarballs-"))
    afterAll(async () => Fs.rm(await made, { recursive: true, force: true }))
    ownDirectory = made
  }
  return ownDirectory
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
 * The package built from its current sources (unless its build is newer than them) and packed, once in the test
 * run: the first test file to ask claims it (making a folder is atomic across the processes of the run) and records
 * the outcome; the others wait for it.
 */
export const packedOnce = async (packageDirectory: string): Promise<string> => {
  const directory = await tarballDirectory()
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
