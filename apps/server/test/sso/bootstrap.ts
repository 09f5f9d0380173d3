import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"

/** A bootstrap file in a directory of its own; `remove` deletes both. */
export const writeBootstrap = async (document: unknown) => {
  const directory = await Fs.mkdtemp(Path.join(Os.tmpdir(), "civicstack-bootstrap-"))
  const file = Path.join(directory, "bootstrap.json")
  await Fs.writeFile(file, JSON.stringify(document))
  return { file, directory, remove: () => Fs.rm(directory, { recursive: true, force: true }) }
}
