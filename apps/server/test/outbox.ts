import type { OutboxMessage } from "@civicstack/core-alerts"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"

/** The emails the `log` provider has written so far into the server's `DATA_DIR/outbox`. */
export const readOutbox = async (dataDir: string): Promise<ReadonlyArray<OutboxMessage>> => {
  const directory = Path.join(dataDir, "outbox")
  const files = await Fs.readdir(directory).catch(() => [])
  return Promise.all(files.filter((file) => file.endsWith(".json")).map(async (file) =>
    JSON.parse(await Fs.readFile(Path.join(directory, file), "utf8")) as OutboxMessage
  ))
}

/** Reads again every 100 ms until `done` holds; fails after 20 s naming `what` it waited for. */
export const until = async <A>(read: () => Promise<A>, done: (value: A) => boolean, what: string): Promise<A> => {
  const deadline = Date.now() + 20_000
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}
