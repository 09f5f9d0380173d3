import { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const script = fileURLToPath(new URL("../scripts/create-data-directory.mjs", import.meta.url))

const holdsDatabase = (dataDir: string) => fs.existsSync(path.join(dataDir, "PG_VERSION"))

/**
 * Creating a database (initdb) makes PGlite use several hundred MB more than running one, and its WASM memory never
 * shrinks: a new data directory is therefore created by a short-lived child process, and this process only opens it.
 */
export const createDataDirectoryIfNew = (dataDir: string): Effect.Effect<void, SqlError> =>
  Effect.suspend(() =>
    holdsDatabase(dataDir) ? Effect.void : Effect.async<void, SqlError>((resume) => {
      const child = spawn(process.execPath, [script, dataDir], { stdio: ["ignore", "ignore", "pipe"] })
      let errorOutput = ""
      child.stderr.on("data", (chunk: Buffer) => {
        errorOutput += chunk.toString()
      })
      const failed = (cause: unknown) =>
        resume(Effect.fail(new SqlError({ cause, message: `Failed to create a PGlite database in ${dataDir}` })))
      child.once("error", failed)
      child.once("exit", (code, signal) => {
        if (code === 0) resume(Effect.void)
        else failed(new Error(`the process creating it exited with ${signal ?? `code ${code}`}: ${errorOutput.trim()}`))
      })
      return Effect.sync(() => child.kill("SIGKILL"))
    })
  )
