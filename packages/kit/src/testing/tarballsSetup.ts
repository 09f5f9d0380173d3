import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import type { TestProject } from "vitest/node"

/** Vitest global setup: one folder for the run's packed tarballs, so each package is built and packed once. */
export default async (project: TestProject) => {
  const directory = await Fs.mkdtemp(Path.join(Os.tmpdir(), "civicstack-tarballs-"))
  project.provide("civicstackTarballs", directory)
  return () => Fs.rm(directory, { recursive: true, force: true })
}
