import { DataDirectoryInUse, DataDirectoryNotEmpty, PgliteClient } from "@civicstack/sql-pglite"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Schedule } from "effect"
import { type ChildProcessByStdio, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Readable, Writable } from "node:stream"
import { fileURLToPath } from "node:url"

type Holder = ChildProcessByStdio<Writable, Readable, null>

const packageDirectory = fileURLToPath(new URL("..", import.meta.url))
const holderScript = fileURLToPath(new URL("fixtures/holdDataDirectory.ts", import.meta.url))

const temporaryDirectory = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "sql-pglite-"))),
  (directory) => Effect.sync(() => fs.rmSync(directory, { recursive: true, force: true }))
)

const lockPath = (dataDir: string) => path.join(dataDir, PgliteClient.lockFileName)

/** Opens a client on `dataDir` for the duration of `use`, then closes it. */
const withClient = <A, E>(
  dataDir: string,
  use: (sql: PgliteClient.PgliteClient) => Effect.Effect<A, E>
) => Effect.provide(Effect.flatMap(PgliteClient.PgliteClient, use), PgliteClient.layer({ dataDir }))

/**
 * A data directory initialised once per file: a copy opens in well under a
 * second, where creating one runs initdb for several seconds.
 */
let initialisedTemplate = ""

beforeAll(async () => {
  initialisedTemplate = fs.mkdtempSync(path.join(os.tmpdir(), "sql-pglite-template-"))
  await Effect.runPromise(withClient(initialisedTemplate, (sql) => sql`SELECT 1`))
})

afterAll(() => fs.rmSync(initialisedTemplate, { recursive: true, force: true }))

const initialisedDirectory = Effect.tap(temporaryDirectory, (directory) =>
  Effect.sync(() => fs.cpSync(initialisedTemplate, directory, { recursive: true })))

/** Starts another process that holds `dataDir` open (test/fixtures/holdDataDirectory.ts). */
const startHolder = (dataDir: string) =>
  Effect.acquireRelease(
    Effect.async<Holder, Error>((resume) => {
      const holder = spawn(
        process.execPath,
        ["--conditions=@civicstack/source", "--import", "tsx", holderScript, dataDir],
        { cwd: packageDirectory, stdio: ["pipe", "pipe", "inherit"] }
      )
      let output = ""
      const onOutput = (chunk: Buffer) => {
        output += chunk.toString()
        if (output.includes("ready")) {
          stopWatching()
          resume(Effect.succeed(holder))
        }
      }
      const onExit = (code: number | null) => {
        stopWatching()
        resume(Effect.fail(new Error(`The holder exited (${code}) before it was ready`)))
      }
      const stopWatching = () => {
        holder.stdout.off("data", onOutput)
        holder.off("exit", onExit)
      }
      holder.stdout.on("data", onOutput)
      holder.once("exit", onExit)
      return Effect.sync(() => {
        stopWatching()
        holder.kill("SIGKILL")
      })
    }),
    (holder) => Effect.sync(() => holder.kill("SIGKILL"))
  )

const exited = (holder: Holder) =>
  Effect.async<number | null>((resume) => {
    if (holder.exitCode !== null || holder.signalCode !== null) {
      resume(Effect.succeed(holder.exitCode))
      return
    }
    holder.once("exit", (code) => resume(Effect.succeed(code)))
  })

/** Waits until a database being created in `parent` has files in its staging copy. */
const stagingCopyBegun = (parent: string) =>
  Effect.sync(() =>
    fs.readdirSync(parent).some((name) =>
      name.includes(".creating-") && fs.readdirSync(path.join(parent, name)).length > 0
    )
  ).pipe(
    Effect.repeat({ until: (begun) => begun, schedule: Schedule.spaced("10 millis") }),
    Effect.timeoutFail({ duration: "30 seconds", onTimeout: () => new Error("no staging copy was written") })
  )

describe("PgliteClient data directory", () => {
  it.scopedLive("is created when missing, keeps its data after closing and is unlocked on close", () =>
    Effect.gen(function*() {
      const dataDir = path.join(yield* temporaryDirectory, "nested", "database")

      yield* withClient(dataDir, (sql) =>
        Effect.gen(function*() {
          yield* sql`CREATE TABLE kept (note text NOT NULL)`
          yield* sql`INSERT INTO kept VALUES ('persisted')`
          expect(fs.readFileSync(lockPath(dataDir), "utf8")).toBe(String(process.pid))
        }))
      expect(fs.existsSync(lockPath(dataDir))).toBe(false)

      expect(yield* withClient(dataDir, (sql) => sql`SELECT note FROM kept`)).toEqual([{ note: "persisted" }])
    }), 60_000)

  it.scopedLive("cut off while it is created, is left without files and created whole on the next open", () =>
    Effect.gen(function*() {
      const parent = yield* temporaryDirectory
      const dataDir = path.join(parent, "database")

      const opening = yield* Effect.fork(withClient(dataDir, () => Effect.void))
      yield* stagingCopyBegun(parent)
      yield* Fiber.interrupt(opening)
      expect(fs.readdirSync(dataDir)).toEqual([])
      expect(fs.readdirSync(parent)).toEqual(["database"])

      expect(yield* withClient(dataDir, (sql) => sql`SELECT 1 AS one`)).toEqual([{ one: 1 }])
      expect(fs.readdirSync(parent)).toEqual(["database"])
    }), 60_000)

  it.scopedLive("removes the staging copy a killed process left beside it", () =>
    Effect.gen(function*() {
      const parent = yield* temporaryDirectory
      const abandoned = path.join(parent, ".database.creating-abc123")
      fs.mkdirSync(path.join(abandoned, "base"), { recursive: true })

      yield* withClient(path.join(parent, "database"), () => Effect.void)

      expect(fs.readdirSync(parent)).toEqual(["database"])
    }), 60_000)

  it.scopedLive("holding files but no database is refused with DataDirectoryNotEmpty and left as it was", () =>
    Effect.gen(function*() {
      const dataDir = yield* temporaryDirectory
      fs.writeFileSync(path.join(dataDir, "notes.txt"), "mine")

      const error = yield* Effect.flip(withClient(dataDir, () => Effect.void))

      expect(error).toBeInstanceOf(DataDirectoryNotEmpty)
      expect(error).toMatchObject({ dataDir, entries: ["notes.txt"] })
      expect(error.message).toContain(dataDir)
      expect(fs.readdirSync(dataDir)).toEqual(["notes.txt"])
    }))

  it.scopedLive("applies the given PostgreSQL settings at each start", () =>
    Effect.gen(function*() {
      const dataDir = yield* initialisedDirectory
      const sharedBuffers = Effect.flatMap(PgliteClient.PgliteClient, (sql) => sql`SHOW shared_buffers`)
      const withSettings = (settings: ReadonlyArray<string>) =>
        Effect.provide(sharedBuffers, PgliteClient.layer({ dataDir, settings }))
      expect(yield* withSettings(["shared_buffers=16MB"])).toEqual([{ shared_buffers: "16MB" }])
      expect(yield* withSettings(["shared_buffers=24MB"])).toEqual([{ shared_buffers: "24MB" }])
    }))

  it.scopedLive("cannot be opened twice in one process", () =>
    Effect.gen(function*() {
      const dataDir = yield* initialisedDirectory

      const error = yield* withClient(dataDir, () => Effect.flip(withClient(dataDir, () => Effect.void)))

      expect(error).toBeInstanceOf(DataDirectoryInUse)
      expect(error).toMatchObject({ dataDir, pid: process.pid })
    }))

  it.scopedLive("held by another process fails to open with DataDirectoryInUse naming it, until it closes", () =>
    Effect.gen(function*() {
      const dataDir = yield* initialisedDirectory
      const holder = yield* startHolder(dataDir)

      const error = yield* Effect.flip(withClient(dataDir, () => Effect.void))
      expect(error).toBeInstanceOf(DataDirectoryInUse)
      expect(error).toMatchObject({ dataDir, pid: holder.pid })
      expect(error.message).toContain(dataDir)
      expect(error.message).toContain(String(holder.pid))

      holder.stdin.end()
      expect(yield* exited(holder)).toBe(0)
      expect(fs.existsSync(lockPath(dataDir))).toBe(false)
      expect(yield* withClient(dataDir, (sql) => sql`SELECT pid FROM visits`)).toEqual([{ pid: holder.pid }])
    }), 60_000)

  it.scopedLive("left locked by a process that died is taken over", () =>
    Effect.gen(function*() {
      const dataDir = yield* initialisedDirectory
      const holder = yield* startHolder(dataDir)
      holder.kill("SIGKILL")
      yield* exited(holder)
      expect(fs.readFileSync(lockPath(dataDir), "utf8")).toBe(String(holder.pid))

      const visits = yield* withClient(dataDir, (sql) =>
        Effect.gen(function*() {
          expect(fs.readFileSync(lockPath(dataDir), "utf8")).toBe(String(process.pid))
          return yield* sql`SELECT pid FROM visits`
        }))
      expect(visits).toEqual([{ pid: holder.pid }])
    }), 60_000)

  it.scopedLive("is closed only after the open transaction finishes", () =>
    Effect.gen(function*() {
      const dataDir = yield* initialisedDirectory
      const opened = yield* Deferred.make<void>()
      const finish = yield* Deferred.make<void>()
      const transactionDone = yield* Deferred.make<void, unknown>()

      const closing = yield* Effect.fork(withClient(dataDir, (sql) =>
        Effect.gen(function*() {
          yield* sql`CREATE TABLE journal (entry text NOT NULL)`
          const transaction = sql.withTransaction(Effect.gen(function*() {
            yield* sql`INSERT INTO journal VALUES ('first')`
            yield* Deferred.succeed(opened, undefined)
            yield* Deferred.await(finish)
            yield* sql`INSERT INTO journal VALUES ('second')`
          }))
          yield* Effect.forkDaemon(Deferred.complete(transactionDone, transaction))
          yield* Deferred.await(opened)
        })))
      // Let the client start closing while the transaction is still open.
      yield* Effect.sleep("200 millis")
      yield* Deferred.succeed(finish, undefined)

      yield* Deferred.await(transactionDone)
      yield* Fiber.join(closing)
      expect(yield* withClient(dataDir, (sql) => sql`SELECT entry FROM journal ORDER BY entry`)).toEqual([
        { entry: "first" },
        { entry: "second" }
      ])
    }))
})
