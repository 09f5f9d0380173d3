import { DataDirectoryNotEmpty, PgliteClient } from "@civicstack/sql-pglite"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Schedule } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { lockEntries, lockPath, makeTemplate, temporaryDirectory, withClient } from "./support"

const template = makeTemplate()

beforeAll(template.create)

afterAll(template.remove)

const initialisedDirectory = Effect.tap(temporaryDirectory, (directory) => Effect.sync(() => template.copyTo(directory)))

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
      expect(lockEntries(dataDir)).toEqual([])

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
