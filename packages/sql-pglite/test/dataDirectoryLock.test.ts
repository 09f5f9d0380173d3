import { DataDirectoryInUse } from "@civicstack/sql-pglite"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { lockDataDirectory } from "../src/DataDirectoryLock"
import {
  type Child,
  exited,
  killHard,
  lineOf,
  lockEntries,
  lockPath,
  makeTemplate,
  startFixture,
  temporaryDirectory,
  withClient
} from "./support"

const template = makeTemplate()

beforeAll(template.create)

afterAll(template.remove)

const initialisedDirectory = Effect.tap(temporaryDirectory, (directory) => Effect.sync(() => template.copyTo(directory)))

/** Another process that opens `dataDir`, records its pid in `visits` and holds it until its standard input closes. */
const startHolder = (dataDir: string) =>
  Effect.tap(startFixture("holdDataDirectory", [dataDir]), (holder) => lineOf(holder, /^ready$/))

/** Leaves `dataDir` locked by a process killed with SIGKILL, as a crash or a power loss would; returns its pid. */
const abandonLock = (dataDir: string) =>
  Effect.gen(function*() {
    const holder = yield* startFixture("holdLock", [dataDir])
    yield* lineOf(holder, /^locked$/)
    yield* killHard(holder)
    expect(lockEntries(dataDir).length).toBeGreaterThan(1)
    return holder.pid
  })

/** A process that has nothing to do with PGlite. */
const startBystander = Effect.acquireRelease(
  Effect.sync(() => spawn("sleep", ["120"], { stdio: "ignore" })),
  (bystander) => Effect.sync(() => bystander.kill("SIGKILL"))
)

const isRunning = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

const outcomeOf = (racer: Child) => lineOf(racer, /^(locked|in use \d+)$/)

const closeInput = (child: Child) => Effect.zipRight(Effect.sync(() => child.stdin.end()), exited(child))

const expectInUse = (error: unknown, dataDir: string, pid: number) => {
  expect(error).toBeInstanceOf(DataDirectoryInUse)
  expect(error).toMatchObject({ dataDir, pid })
  expect((error as DataDirectoryInUse).message).toContain(dataDir)
  expect((error as DataDirectoryInUse).message).toContain(`process ${pid}`)
}

describe("PgliteClient data directory lock", () => {
  it.scopedLive("held by another process fails to open with DataDirectoryInUse naming it, until it closes", () =>
    Effect.gen(function*() {
      const dataDir = yield* initialisedDirectory
      const holder = yield* startHolder(dataDir)

      expectInUse(yield* Effect.flip(withClient(dataDir, () => Effect.void)), dataDir, holder.pid!)

      yield* closeInput(holder)
      expect(holder.exitCode).toBe(0)
      expect(lockEntries(dataDir)).toEqual([])
      expect(yield* withClient(dataDir, (sql) => sql`SELECT pid FROM visits`)).toEqual([{ pid: holder.pid }])
    }), 60_000)

  it.scopedLive("cannot be opened twice in one process", () =>
    Effect.gen(function*() {
      const dataDir = yield* initialisedDirectory

      const error = yield* withClient(dataDir, () => Effect.flip(withClient(dataDir, () => Effect.void)))

      expectInUse(error, dataDir, process.pid)
    }), 60_000)

  it.scopedLive("left locked by a process killed with SIGKILL is taken over at once, and left clean on close", () =>
    Effect.gen(function*() {
      const dataDir = yield* initialisedDirectory
      const holder = yield* startHolder(dataDir)
      yield* killHard(holder)
      expect(fs.readFileSync(lockPath(dataDir), "utf8")).toBe(String(holder.pid))

      const visits = yield* withClient(dataDir, (sql) =>
        Effect.gen(function*() {
          expect(fs.readFileSync(lockPath(dataDir), "utf8")).toBe(String(process.pid))
          return yield* sql`SELECT pid FROM visits`
        }))
      expect(visits).toEqual([{ pid: holder.pid }])
      expect(lockEntries(dataDir)).toEqual([])
    }), 60_000)

  it.scopedLive("left locked under this process's own pid (a restart that got the same pid) is taken over", () =>
    Effect.gen(function*() {
      const dataDir = yield* initialisedDirectory
      yield* abandonLock(dataDir)
      fs.writeFileSync(lockPath(dataDir), String(process.pid))

      expect(yield* withClient(dataDir, (sql) => sql`SELECT 1 AS one`)).toEqual([{ one: 1 }])
      expect(lockEntries(dataDir)).toEqual([])

      // A pid file alone, as an older version left it, is no lock either.
      fs.writeFileSync(lockPath(dataDir), String(process.pid))
      expect(yield* withClient(dataDir, (sql) => sql`SELECT 1 AS one`)).toEqual([{ one: 1 }])
      expect(lockEntries(dataDir)).toEqual([])
    }), 60_000)

  it.scopedLive("left locked under the pid of a live process that does not hold it is taken over", () =>
    Effect.gen(function*() {
      const dataDir = yield* initialisedDirectory
      const bystander = yield* startBystander
      yield* abandonLock(dataDir)
      fs.writeFileSync(lockPath(dataDir), String(bystander.pid))

      expect(yield* withClient(dataDir, (sql) =>
        Effect.sync(() => fs.readFileSync(lockPath(dataDir), "utf8")))).toBe(String(process.pid))
      expect(isRunning(bystander.pid!)).toBe(true)
    }), 60_000)

  it.scopedLive("left locked and raced for by two processes goes to exactly one of them", () =>
    Effect.gen(function*() {
      const rounds = yield* Effect.forEach([1, 2, 3], () =>
        Effect.gen(function*() {
          const dataDir = yield* temporaryDirectory
          yield* abandonLock(dataDir)
          const racers = yield* Effect.forEach([1, 2], () => startFixture("holdLock", [dataDir, "--on-go"]))
          yield* Effect.forEach(racers, (racer) => lineOf(racer, /^armed$/), { discard: true })
          return racers
        }), { concurrency: "unbounded" })

      for (const racers of rounds) {
        for (const racer of racers) racer.stdin.write("go\n")
        const outcomes = yield* Effect.forEach(racers, outcomeOf, { concurrency: "unbounded" })
        const winners = racers.filter((_, index) => outcomes[index] === "locked")
        expect(winners).toHaveLength(1)
        expect(outcomes).toContain(`in use ${winners[0]!.pid}`)
        for (const racer of racers) expect(yield* closeInput(racer)).toBe(0)
      }
    }), 120_000)

  it.scopedLive("left locked and raced for by many openers in one process goes to exactly one of them", () =>
    Effect.gen(function*() {
      const directories = yield* Effect.forEach([1, 2, 3, 4, 5], () =>
        Effect.tap(temporaryDirectory, abandonLock), { concurrency: "unbounded" })

      for (const dataDir of directories) {
        // One scope for all: the winner holds the lock until every opener has had its answer.
        const outcomes = yield* Effect.scoped(
          Effect.forEach([1, 2, 3, 4, 5, 6], () => Effect.either(lockDataDirectory(dataDir)), {
            concurrency: "unbounded"
          })
        )
        expect(outcomes.filter(Either.isRight)).toHaveLength(1)
        for (const outcome of outcomes) {
          if (Either.isLeft(outcome)) expectInUse(outcome.left, dataDir, process.pid)
        }
        expect(lockEntries(dataDir)).toEqual([])
      }
    }), 120_000)

  it.scopedLive("with a path too long for a Unix socket is locked all the same", () =>
    Effect.gen(function*() {
      const dataDir = path.join(yield* temporaryDirectory, "a-directory-with-a-long-name-".repeat(2), "database".repeat(8))
      expect(Buffer.byteLength(dataDir)).toBeGreaterThan(120)
      template.copyTo(dataDir)
      const holder = yield* startHolder(dataDir)

      expectInUse(yield* Effect.flip(withClient(dataDir, () => Effect.void)), dataDir, holder.pid!)

      yield* killHard(holder)
      expect(yield* withClient(dataDir, (sql) => sql`SELECT pid FROM visits`)).toEqual([{ pid: holder.pid }])
      expect(lockEntries(dataDir)).toEqual([])
    }), 60_000)
})
