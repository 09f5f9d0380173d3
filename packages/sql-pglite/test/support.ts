import { PgliteClient } from "@civicstack/sql-pglite"
import { Effect } from "effect"
import { type ChildProcessByStdio, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Readable, Writable } from "node:stream"
import { fileURLToPath } from "node:url"

export const temporaryDirectory = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "sql-pglite-"))),
  (directory) => Effect.sync(() => fs.rmSync(directory, { recursive: true, force: true }))
)

export const lockPath = (dataDir: string) => path.join(dataDir, PgliteClient.lockFileName)

/** Names in `dataDir` that belong to the lock (its pid file and its sockets). */
export const lockEntries = (dataDir: string) =>
  fs.readdirSync(dataDir).filter((name) => name.startsWith(PgliteClient.lockFileName))

/** Opens a client on `dataDir` for the duration of `use`, then closes it. */
export const withClient = <A, E>(
  dataDir: string,
  use: (sql: PgliteClient.PgliteClient) => Effect.Effect<A, E>
) => Effect.provide(Effect.flatMap(PgliteClient.PgliteClient, use), PgliteClient.layer({ dataDir }))

/**
 * A data directory initialised once per test file: a copy opens in well under a second, where creating one runs
 * initdb for several seconds. Call `create` in `beforeAll` and `remove` in `afterAll`.
 */
export const makeTemplate = () => {
  let directory = ""
  return {
    create: async () => {
      directory = fs.mkdtempSync(path.join(os.tmpdir(), "sql-pglite-template-"))
      await Effect.runPromise(withClient(directory, (sql) => sql`SELECT 1`))
    },
    remove: () => fs.rmSync(directory, { recursive: true, force: true }),
    /** Copies the template into `target`, created if missing. */
    copyTo: (target: string) => fs.cpSync(directory, target, { recursive: true })
  }
}

export type Child = ChildProcessByStdio<Writable, Readable, null>

const packageDirectory = fileURLToPath(new URL("..", import.meta.url))

/** Starts `test/fixtures/<fixture>.ts` in another process, killed (SIGKILL) when the scope closes. */
export const startFixture = (fixture: string, args: ReadonlyArray<string>) =>
  Effect.acquireRelease(
    Effect.sync((): Child => {
      const child = spawn(
        process.execPath,
        [
          "--conditions=@civicstack/source",
          "--import",
          "tsx",
          fileURLToPath(new URL(`fixtures/${fixture}.ts`, import.meta.url)),
          ...args
        ],
        { cwd: packageDirectory, stdio: ["pipe", "pipe", "inherit"] }
      )
      outputOf(child)
      return child
    }),
    (child) => Effect.sync(() => child.kill("SIGKILL"))
  )

const outputs = new WeakMap<Child, { text: string }>()

const outputOf = (child: Child) => {
  let output = outputs.get(child)
  if (output === undefined) {
    const created = { text: "" }
    child.stdout.on("data", (chunk: Buffer) => {
      created.text += chunk.toString()
    })
    outputs.set(child, created)
    output = created
  }
  return output
}

/** Waits for a line of the child's standard output that matches `pattern`, and returns it. */
export const lineOf = (child: Child, pattern: RegExp) =>
  Effect.async<string, Error>((resume) => {
    const output = outputOf(child)
    const check = () => {
      const line = output.text.split("\n").find((candidate) => pattern.test(candidate))
      if (line === undefined) return false
      stop()
      resume(Effect.succeed(line))
      return true
    }
    const onExit = () => {
      if (!check()) {
        stop()
        resume(Effect.fail(new Error(`the child exited before printing ${pattern}; it printed: ${output.text}`)))
      }
    }
    const stop = () => {
      child.stdout.off("data", check)
      child.off("exit", onExit)
    }
    if (check()) return
    child.stdout.on("data", check)
    child.once("exit", onExit)
    return Effect.sync(stop)
  })

export const exited = (child: Child) =>
  Effect.async<number | null>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resume(Effect.succeed(child.exitCode))
      return
    }
    child.once("exit", (code) => resume(Effect.succeed(code)))
  })

/** Kills the child with SIGKILL, so that it leaves whatever it held behind, and waits for its end. */
export const killHard = (child: Child) => Effect.zipRight(Effect.sync(() => child.kill("SIGKILL")), exited(child))
