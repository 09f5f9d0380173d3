import { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { lockFileName } from "./DataDirectoryLock"

/**
 * The data directory holds files but no database: an unrelated directory, or one whose database was made by hand
 * or by an older version and left half made. It is not touched; it has to be emptied or another one chosen.
 */
export class DataDirectoryNotEmpty extends Schema.TaggedError<DataDirectoryNotEmpty>()("DataDirectoryNotEmpty", {
  dataDir: Schema.String,
  entries: Schema.Array(Schema.String),
  message: Schema.String
}) {}

const script = fileURLToPath(new URL("../scripts/create-data-directory.mjs", import.meta.url))

/** Written last into a data directory, so its presence means the database is whole. */
const versionFile = "PG_VERSION"

const holdsDatabase = (dataDir: string) => fs.existsSync(path.join(dataDir, versionFile))

const foreignEntries = (dataDir: string) => fs.readdirSync(dataDir).filter((name) => !name.startsWith(lockFileName))

const stagingPrefix = (dataDir: string) => `.${path.basename(dataDir)}.creating-`

const failure = (dataDir: string, cause: unknown) =>
  new SqlError({ cause, message: `Failed to create a PGlite database in ${dataDir}` })

const createIn = (directory: string) =>
  Effect.async<void, Error>((resume) => {
    const child = spawn(process.execPath, [script, directory], { stdio: ["ignore", "ignore", "pipe"] })
    let errorOutput = ""
    child.stderr.on("data", (chunk: Buffer) => {
      errorOutput += chunk.toString()
    })
    child.once("error", (cause) => resume(Effect.fail(cause)))
    child.once("exit", (code, signal) => {
      if (code === 0) resume(Effect.void)
      else resume(Effect.fail(new Error(`the process creating it exited with ${signal ?? `code ${code}`}: ${errorOutput.trim()}`)))
    })
    return Effect.sync(() => child.kill("SIGKILL"))
  })

/** Moves the staged database in, its version file last. */
const moveInto = (staging: string, dataDir: string) =>
  Effect.try(() => {
    const entries = fs.readdirSync(staging)
    for (const name of [...entries.filter((name) => name !== versionFile), versionFile]) {
      fs.renameSync(path.join(staging, name), path.join(dataDir, name))
    }
  })

/** Staging directories of creations cut off earlier; the caller holds the data directory's lock, so none is live. */
const removeAbandonedStaging = (dataDir: string) => {
  const parent = path.dirname(dataDir)
  for (const name of fs.readdirSync(parent)) {
    if (name.startsWith(stagingPrefix(dataDir))) fs.rmSync(path.join(parent, name), { recursive: true, force: true })
  }
}

/**
 * Creating a database (initdb) makes PGlite use several hundred MB more than running one, and its WASM memory never
 * shrinks: a new database is therefore created by a short-lived child process, and this process only opens it. The
 * child writes into a staging directory beside `dataDir`, moved in once whole, so a creation cut off at any point
 * leaves `dataDir` without a database and the next start creates it again. The caller must hold the lock on
 * `dataDir`.
 */
export const createDataDirectoryIfNew = (dataDir: string): Effect.Effect<void, SqlError | DataDirectoryNotEmpty> =>
  Effect.suspend((): Effect.Effect<void, SqlError | DataDirectoryNotEmpty> => {
    if (holdsDatabase(dataDir)) return Effect.void
    const entries = foreignEntries(dataDir)
    if (entries.length > 0) {
      return Effect.fail(
        new DataDirectoryNotEmpty({
          dataDir,
          entries,
          message: `The data directory ${dataDir} holds files but no PGlite database (${
            entries.slice(0, 5).join(", ")
          }${entries.length > 5 ? ", …" : ""}); empty it or choose another directory`
        })
      )
    }
    return Effect.acquireUseRelease(
      Effect.try(() => {
        removeAbandonedStaging(dataDir)
        return fs.mkdtempSync(path.join(path.dirname(dataDir), stagingPrefix(dataDir)))
      }),
      (staging) => createIn(staging).pipe(Effect.zipRight(moveInto(staging, dataDir))),
      (staging) => Effect.sync(() => fs.rmSync(staging, { recursive: true, force: true }))
    ).pipe(Effect.mapError((cause) => failure(dataDir, cause)))
  })
