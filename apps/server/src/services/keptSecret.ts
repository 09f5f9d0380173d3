import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"

/**
 * A key for when its variable is unset outside production: 32 random bytes, encoded by `encoding`, made at the first
 * start and kept in `DATA_DIR/<file>` (readable by its owner only), so that what it signed or sealed before a restart
 * still opens. Copies that share a database but not a data directory need the variable. `made` is logged once.
 */
export const keptSecret = (dataDir: string, file: string, encoding: "base64" | "base64url", made: string) => {
  const path = Path.resolve(dataDir, file)
  return Effect.promise(async () => {
    const read = () => Fs.readFile(path, "utf8").then((text) => text.trim(), () => "")
    const kept = await read()
    if (kept.length >= 32) return { secret: kept, made: false }
    await Fs.mkdir(dataDir, { recursive: true })
    const secret = randomBytes(32).toString(encoding)
    // `wx`: when another process made it first, its secret is the one kept
    const written = await Fs.writeFile(path, `${secret}\n`, { mode: 0o600, flag: "wx" }).then(() => true, () => false)
    return written ? { secret, made: true } : { secret: await read(), made: false }
  }).pipe(
    Effect.tap((kept) => (kept.made ? Effect.logWarning(made).pipe(Effect.annotateLogs({ file: path })) : Effect.void)),
    Effect.map(({ secret }) => secret)
  )
}
