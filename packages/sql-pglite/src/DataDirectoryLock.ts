/**
 * The lock on a data directory is a Unix socket its holder listens on: the OS closes it when the holder dies,
 * however it dies, so a lock is held exactly as long as its process lives, whatever pids are reused later.
 *
 * A socket path can be taken over only by creating a new name, never by replacing an old one (removing a dead
 * socket and binding anew would let two openers that found the same dead socket each remove the other's). So each
 * holder takes a new generation: the lock is the socket `<lockFileName>.<n>` with the highest n. An opener listens on
 * a socket of its own under a random name, then, if the highest generation is dead, hard-links its socket to the
 * next generation's name. The link fails if that name exists, so only one opener wins each generation, and a name
 * appears already listening, so a live holder is never mistaken for a dead one. An opener that finds a higher
 * generation after it linked (it raced with a cleanup of old names) steps back.
 */
import { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as fs from "node:fs"
import * as path from "node:path"
import {
  fitsSocketPath,
  generationName,
  highestGeneration,
  lockFileName,
  newClaimName,
  parseSocketName,
  pipeName,
  temporarySocketDirectory
} from "./lockNames"
import { listen, type LockSocket, probe, type Probe } from "./lockSocket"

export { lockFileName } from "./lockNames"

/**
 * Another live process (possibly this one) has the data directory open.
 * PGlite is a single-process database: two instances writing one directory
 * would corrupt it.
 */
export class DataDirectoryInUse extends Schema.TaggedError<DataDirectoryInUse>()("DataDirectoryInUse", {
  dataDir: Schema.String,
  /** The holder's pid, or 0 when it could not be learnt. */
  pid: Schema.Number,
  message: Schema.String
}) {}

/** The directory's filesystem cannot hold Unix sockets or hard links to them. */
class SocketsUnsupported extends Schema.TaggedError<SocketsUnsupported>()("SocketsUnsupported", {
  directory: Schema.String,
  cause: Schema.Defect
}) {}

interface HeldLock {
  readonly release: Effect.Effect<void>
}

type Failure = DataDirectoryInUse | SqlError

/**
 * Creates `dataDir` if missing and holds its lock for the life of the scope. A lock whose holder is gone (crash,
 * `kill -9`, power loss) is taken over, whatever process now has its pid.
 */
export const lockDataDirectory = (dataDir: string): Effect.Effect<void, Failure, Scope.Scope> =>
  Effect.gen(function*() {
    const realDataDir = yield* attempt(dataDir, () => {
      fs.mkdirSync(dataDir, { recursive: true })
      return fs.realpathSync(dataDir)
    })
    yield* Effect.acquireRelease(take(dataDir, realDataDir), (lock) => lock.release)
  })

const maxAttempts = 100
const retryDelay = "10 millis"

const take = (dataDir: string, realDataDir: string): Effect.Effect<HeldLock, Failure> => {
  if (process.platform === "win32") return takePipe(dataDir, pipeName(realDataDir))
  const outside = temporarySocketDirectory(realDataDir)
  const takeOutside = Effect.suspend(() =>
    fitsSocketPath(outside)
      ? takeInDirectory(dataDir, outside, "outside")
      : Effect.fail(failure(dataDir, `no Unix socket path short enough for its lock, even in ${outside}`))
  ).pipe(
    Effect.catchTag("SocketsUnsupported", (error) =>
      Effect.fail(failure(dataDir, `cannot create Unix sockets in ${error.directory}`, error.cause)))
  )
  return fitsSocketPath(realDataDir)
    ? takeInDirectory(dataDir, realDataDir, "inside").pipe(Effect.catchTag("SocketsUnsupported", () => takeOutside))
    : takeOutside
}

const takeInDirectory = (
  dataDir: string,
  socketDirectory: string,
  where: "inside" | "outside"
): Effect.Effect<HeldLock, Failure | SocketsUnsupported> =>
  Effect.gen(function*() {
    const claimPath = path.join(socketDirectory, newClaimName())
    const socket = yield* listenInDirectory(dataDir, socketDirectory, claimPath)
    const dropClaim = Effect.zipRight(removeQuietly(claimPath), socket.close)
    const claimId = yield* attempt(dataDir, () => fileId(claimPath)).pipe(Effect.onError(() => dropClaim))
    const generation = yield* contend(dataDir, socketDirectory, claimPath, claimId, socket).pipe(
      Effect.onError(() => dropClaim)
    )
    const generationPath = path.join(socketDirectory, generationName(generation))
    const release = Effect.all([
      removePidFile(dataDir),
      Effect.ignore(Effect.try(() => removeIfSame(generationPath, claimId))),
      removeQuietly(claimPath),
      socket.close,
      where === "outside" ? removeIfEmpty(socketDirectory) : Effect.void
    ], { discard: true })
    // The socket lives on under its generation's name.
    yield* attempt(dataDir, () => fs.rmSync(claimPath, { force: true })).pipe(Effect.onError(() => release))
    yield* writePidFile(dataDir).pipe(Effect.onError(() => release))
    yield* removeDeadGenerations(socketDirectory, generation)
    return { release }
  })

/**
 * Listens on `claimPath`, creating its directory first. A directory outside the data directory is removed by the
 * last holder that leaves it empty, possibly between its creation here and the listening: then it is made again.
 */
const listenInDirectory = (dataDir: string, socketDirectory: string, claimPath: string) =>
  attempt(dataDir, () => fs.mkdirSync(socketDirectory, { recursive: true, mode: 0o700 })).pipe(
    Effect.zipRight(listen(claimPath)),
    Effect.retry({ times: 3, while: (error) => errorCode(error) === "ENOENT" }),
    Effect.mapError((error) => error instanceof SqlError ? error : unsupportedOr(dataDir, socketDirectory)(error))
  )

const removeIfEmpty = (directory: string) => Effect.ignore(Effect.try(() => fs.rmdirSync(directory)))

/** Takes the next generation of the lock, or fails naming the live holder. */
const contend = (
  dataDir: string,
  socketDirectory: string,
  claimPath: string,
  claimId: string,
  socket: LockSocket
): Effect.Effect<number, Failure | SocketsUnsupported> =>
  Effect.gen(function*() {
    for (let round = 0; round < maxAttempts; round++) {
      const highest = yield* attempt(dataDir, () => highestGeneration(socketDirectory))
      if (highest !== undefined) {
        const found = yield* probeOrFail(dataDir, path.join(socketDirectory, generationName(highest)))
        if (found._tag === "Live") {
          if (isStillCompeting(found)) {
            yield* Effect.sleep(retryDelay)
            continue
          }
          return yield* Effect.fail(inUse(dataDir, found))
        }
        // Absent: its holder closed meanwhile; look again.
        if (found._tag === "Absent") continue
      }
      const generation = (highest ?? 0) + 1
      const generationPath = path.join(socketDirectory, generationName(generation))
      if (!(yield* linkExclusively(dataDir, socketDirectory, claimPath, generationPath))) continue
      const newest = yield* attempt(dataDir, () => highestGeneration(socketDirectory))
      if (newest !== undefined && newest > generation) {
        yield* attempt(dataDir, () => removeIfSame(generationPath, claimId))
        continue
      }
      socket.markHolding()
      return generation
    }
    return yield* Effect.fail(failure(dataDir, `its lock was still contended after ${maxAttempts} attempts`))
  })

/** Windows: a named pipe can be listened on by one process only, and is freed when that process ends. */
const takePipe = (dataDir: string, pipe: string): Effect.Effect<HeldLock, Failure> =>
  Effect.gen(function*() {
    for (let round = 0; round < maxAttempts; round++) {
      const listened = yield* Effect.either(listen(pipe))
      if (Either.isRight(listened)) {
        const socket = listened.right
        socket.markHolding()
        const release = Effect.zipRight(removePidFile(dataDir), socket.close)
        yield* writePidFile(dataDir).pipe(Effect.onError(() => release))
        return { release }
      }
      if (listened.left.code !== "EADDRINUSE") return yield* Effect.fail(failure(dataDir, listened.left.message, listened.left))
      const found = yield* probeOrFail(dataDir, pipe)
      if (found._tag === "Live") {
        if (isStillCompeting(found)) yield* Effect.sleep(retryDelay)
        else return yield* Effect.fail(inUse(dataDir, found))
      }
    }
    return yield* Effect.fail(failure(dataDir, `its lock was still contended after ${maxAttempts} attempts`))
  })

/** A live socket whose process has not won the lock yet (it may still step back). */
const isStillCompeting = (found: Extract<Probe, { _tag: "Live" }>) =>
  Option.isSome(found.status) && !found.status.value.holding

/**
 * Old generations whose holders are gone. A name is only ever created already listening, so one found dead stays
 * dead, and removing it cannot remove a live holder.
 */
const removeDeadGenerations = (socketDirectory: string, current: number) =>
  Effect.try(() => fs.readdirSync(socketDirectory)).pipe(
    Effect.flatMap((names) =>
      Effect.forEach(names, (name) => {
        const parsed = parseSocketName(name)
        if (parsed?._tag !== "Generation" || parsed.generation >= current) return Effect.void
        const socketPath = path.join(socketDirectory, name)
        return probe(socketPath).pipe(
          Effect.flatMap((found) => found._tag === "Dead" ? Effect.try(() => fs.rmSync(socketPath)) : Effect.void),
          Effect.ignore
        )
      }, { discard: true })
    ),
    Effect.ignore
  )

const linkExclusively = (dataDir: string, socketDirectory: string, from: string, to: string) =>
  Effect.try({
    try: () => {
      try {
        fs.linkSync(from, to)
        return true
      } catch (error) {
        if (errorCode(error) === "EEXIST") return false
        throw error
      }
    },
    catch: unsupportedOr(dataDir, socketDirectory)
  })

const probeOrFail = (dataDir: string, address: string) =>
  Effect.mapError(probe(address), (cause) => failure(dataDir, `cannot reach the lock socket ${address}`, cause))

const unsupportedCodes = new Set(["EPERM", "EOPNOTSUPP", "ENOTSUP", "ENOSYS"])

const unsupportedOr = (dataDir: string, socketDirectory: string) => (cause: unknown): SocketsUnsupported | SqlError =>
  unsupportedCodes.has(String(errorCode(cause)))
    ? new SocketsUnsupported({ directory: socketDirectory, cause })
    : failure(dataDir, String(cause instanceof Error ? cause.message : cause), cause)

const inUse = (dataDir: string, found: Extract<Probe, { _tag: "Live" }>) => {
  const pid = Option.match(found.status, { onSome: (status) => status.pid, onNone: () => readPidFile(dataDir) })
  return new DataDirectoryInUse({
    dataDir,
    pid: pid ?? 0,
    message: `The data directory ${dataDir} is in use by ${
      pid === undefined ? "another process" : `process ${pid}`
    }; PGlite allows one process per data directory`
  })
}

const pidFilePath = (dataDir: string) => path.join(dataDir, lockFileName)

/** The pid file only names the holder in messages; the lock is the socket. */
const writePidFile = (dataDir: string) => attempt(dataDir, () => fs.writeFileSync(pidFilePath(dataDir), String(process.pid)))

const removePidFile = (dataDir: string) =>
  Effect.ignore(Effect.try(() => {
    if (readPidFile(dataDir) === process.pid) fs.rmSync(pidFilePath(dataDir), { force: true })
  }))

const readPidFile = (dataDir: string): number | undefined => {
  try {
    const pid = Number(fs.readFileSync(pidFilePath(dataDir), "utf8").trim())
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

const fileId = (filePath: string) => {
  const stats = fs.statSync(filePath, { bigint: true })
  return `${stats.dev}:${stats.ino}`
}

const removeIfSame = (filePath: string, id: string) => {
  try {
    if (fileId(filePath) === id) fs.rmSync(filePath)
  } catch (error) {
    if (errorCode(error) !== "ENOENT") throw error
  }
}

const removeQuietly = (filePath: string) => Effect.ignore(Effect.try(() => fs.rmSync(filePath, { force: true })))

const failure = (dataDir: string, reason: string, cause?: unknown) =>
  new SqlError({ cause, message: `Failed to lock the data directory ${dataDir}: ${reason}` })

const attempt = <A>(dataDir: string, run: () => A) =>
  Effect.try({ try: run, catch: (cause) => failure(dataDir, cause instanceof Error ? cause.message : String(cause), cause) })

const errorCode = (error: unknown): unknown =>
  typeof error === "object" && error !== null && "code" in error ? error.code : undefined
