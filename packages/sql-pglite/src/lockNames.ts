import { createHash, randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

/** Name of the file, inside the data directory, that holds the pid of the process using it. */
export const lockFileName = ".sql-pglite.lock"

/**
 * The lock's sockets are named `<lockFileName>.<n>` (the lock of generation n) and `<lockFileName>.t<hex>` (a
 * socket an opener listens on while it competes for the lock).
 */
const socketPrefix = `${lockFileName}.`
const generationPattern = /^[1-9][0-9]{0,9}$/
const claimPattern = /^t[0-9a-f]{8}$/

export type SocketName =
  | { readonly _tag: "Generation"; readonly generation: number }
  | { readonly _tag: "Claim" }

export const generationName = (generation: number): string => `${socketPrefix}${generation}`

export const newClaimName = (): string => `${socketPrefix}t${randomBytes(4).toString("hex")}`

export const parseSocketName = (name: string): SocketName | undefined => {
  if (!name.startsWith(socketPrefix)) return undefined
  const rest = name.slice(socketPrefix.length)
  if (generationPattern.test(rest)) return { _tag: "Generation", generation: Number(rest) }
  if (claimPattern.test(rest)) return { _tag: "Claim" }
  return undefined
}

/** The highest lock generation whose socket is in `directory`. */
export const highestGeneration = (directory: string): number | undefined => {
  let highest: number | undefined
  for (const name of fs.readdirSync(directory)) {
    const parsed = parseSocketName(name)
    if (parsed?._tag === "Generation" && (highest === undefined || parsed.generation > highest)) {
      highest = parsed.generation
    }
  }
  return highest
}

/**
 * A Unix socket path longer than this is cut short without an error (sun_path holds 104 bytes on macOS and 108 on
 * Linux, the final NUL included).
 */
const maxSocketPathBytes = 103
const longestSocketName = socketPrefix.length + 10

export const fitsSocketPath = (directory: string): boolean =>
  Buffer.byteLength(directory) + 1 + longestSocketName <= maxSocketPathBytes

const digest = (text: string) => createHash("sha256").update(text).digest("hex").slice(0, 16)

/**
 * Where the lock's sockets live when the data directory cannot hold them (its path is too long for a socket path,
 * or its filesystem has no sockets): a directory of the OS temp dir named by a hash of the data directory's
 * resolved path, so every process that opens that directory on this machine finds the same place.
 */
export const temporarySocketDirectory = (realDataDir: string): string =>
  path.join(os.tmpdir(), `sql-pglite-${digest(realDataDir)}`)

/** Windows has no Unix sockets in directories; a named pipe plays their part and is freed when its process ends. */
export const pipeName = (realDataDir: string): string => `\\\\?\\pipe\\sql-pglite-${digest(realDataDir.toLowerCase())}`
