import { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as fs from "node:fs"
import * as path from "node:path"

/**
 * Another live process (possibly this one) has the data directory open.
 * PGlite is a single-process database: two instances writing one directory
 * would corrupt it.
 */
export class DataDirectoryInUse extends Schema.TaggedError<DataDirectoryInUse>()("DataDirectoryInUse", {
  dataDir: Schema.String,
  pid: Schema.Number,
  message: Schema.String
}) {}

/** Name of the file, inside the data directory, that holds the pid of the process using it. */
export const lockFileName = ".sql-pglite.lock"

/**
 * Creates `dataDir` if missing and takes its lock file for the life of the
 * scope. A lock left behind by a process that no longer runs is taken over.
 */
export const lockDataDirectory = (
  dataDir: string
): Effect.Effect<void, DataDirectoryInUse | SqlError, Scope.Scope> => {
  const lockPath = path.join(dataDir, lockFileName)
  const acquire = Effect.try({
    try: () => {
      fs.mkdirSync(dataDir, { recursive: true })
      return takeLock(lockPath)
    },
    catch: (cause) => new SqlError({ cause, message: `Failed to lock the data directory ${dataDir}` })
  }).pipe(
    Effect.flatMap((outcome) =>
      outcome._tag === "Taken" ? Effect.void : Effect.fail(
        new DataDirectoryInUse({
          dataDir,
          pid: outcome.pid,
          message:
            `The data directory ${dataDir} is in use by process ${outcome.pid}; PGlite allows one process per data directory`
        })
      )
    )
  )
  return Effect.acquireRelease(acquire, () => Effect.ignore(Effect.try(() => releaseLock(lockPath))))
}

type Outcome =
  | { readonly _tag: "Taken" }
  | { readonly _tag: "Held"; readonly pid: number }
  | { readonly _tag: "Retry" }

const maxAttempts = 10

const takeLock = (lockPath: string): Exclude<Outcome, { _tag: "Retry" }> => {
  for (let attempt = 0; attempt < maxAttempts; attempt++) {
    if (createExclusively(lockPath)) return { _tag: "Taken" }
    const content = readIfExists(lockPath)
    if (content === undefined) continue
    const holder = parsePid(content)
    if (holder !== undefined && isRunning(holder)) return { _tag: "Held", pid: holder }
    const outcome = removeStaleLock(lockPath, content)
    if (outcome._tag === "Held") return outcome
  }
  throw new Error(`Could not take ${lockPath} after ${maxAttempts} attempts`)
}

/**
 * Only one process may remove a given stale lock: it claims the removal with
 * a second exclusive file, and removes the lock only if it still holds the
 * stale content (another process may have replaced it meanwhile).
 */
const removeStaleLock = (lockPath: string, staleContent: string): Outcome => {
  const claimPath = `${lockPath}.takeover`
  if (!createExclusively(claimPath)) {
    const claimant = parsePid(readIfExists(claimPath) ?? "")
    if (claimant !== undefined && isRunning(claimant)) return { _tag: "Held", pid: claimant }
    fs.rmSync(claimPath, { force: true })
    return { _tag: "Retry" }
  }
  try {
    if (readIfExists(lockPath) === staleContent) fs.rmSync(lockPath, { force: true })
  } finally {
    fs.rmSync(claimPath, { force: true })
  }
  return { _tag: "Retry" }
}

const releaseLock = (lockPath: string): void => {
  if (readIfExists(lockPath) === String(process.pid)) fs.rmSync(lockPath, { force: true })
}

const createExclusively = (filePath: string): boolean => {
  try {
    fs.writeFileSync(filePath, String(process.pid), { flag: "wx" })
    return true
  } catch (error) {
    if (errorCode(error) === "EEXIST") return false
    throw error
  }
}

const readIfExists = (filePath: string): string | undefined => {
  try {
    return fs.readFileSync(filePath, "utf8")
  } catch (error) {
    if (errorCode(error) === "ENOENT") return undefined
    throw error
  }
}

const parsePid = (content: string): number | undefined => {
  const pid = Number(content.trim())
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined
}

const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return errorCode(error) === "EPERM"
  }
}

const errorCode = (error: unknown): unknown =>
  typeof error === "object" && error !== null && "code" in error ? error.code : undefined
