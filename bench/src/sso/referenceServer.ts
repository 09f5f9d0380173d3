import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { answersReady, freeLoopbackPort, serverMallocEnv, serverNodeFlags } from "../serverLaunch"

const serverPackage = dirname(createRequire(import.meta.url).resolve("@civicstack/server/package.json"))
// From the repository root, as the root's `npm start` runs it: tsx takes the JSX settings of the sign-in pages from
// the root tsconfig.json, whose `include` covers the packages (the server's own covers only its sources).
const repositoryRoot = dirname(dirname(serverPackage))

export type ServerDatabase =
  | { readonly _tag: "Postgres"; readonly url: string }
  | { readonly _tag: "Pglite"; readonly dataDir: string }

export interface ReferenceServer {
  readonly url: string
  readonly pid: number
  readonly stop: () => Promise<void>
}

export interface ServerOptions {
  /** `SERVICES`; `sso` when unset. */
  readonly services?: string
  /** More environment variables for the server (the other services' settings). */
  readonly env?: Readonly<Record<string, string>>
  /** A file descriptor that takes the server's stdout and stderr; this process's own when unset. */
  readonly outputFd?: number
}

/**
 * Starts the reference server serving SSO only (or `options.services`), in a child process, from its build when
 * `npm run build` has made it, else from its sources as `npm start` does; resolves once it answers ready (the
 * bootstrap file applied).
 */
export const startReferenceServer = async (
  database: ServerDatabase,
  bootstrapFile: string,
  options: ServerOptions = {}
): Promise<ReferenceServer> => {
  const port = await freeLoopbackPort()
  const url = `http://127.0.0.1:${port}`
  const built = join(serverPackage, "dist", "cli.js")
  const entry = existsSync(built)
    ? [built]
    : ["--conditions=@civicstack/source", "--import", "tsx", join(serverPackage, "src", "cli.ts")]
  const child = spawn(process.execPath, [...serverNodeFlags(), ...entry, "serve"], {
    cwd: repositoryRoot,
    env: {
      PATH: process.env.PATH ?? "",
      ...serverMallocEnv(),
      HOST: "127.0.0.1",
      PORT: String(port),
      SSO_ISSUER: url,
      SERVICES: options.services ?? "sso",
      LOG_LEVEL: "warning",
      SHUTDOWN_GRACE_SECONDS: "5",
      CIVICSTACK_BOOTSTRAP: bootstrapFile,
      ...options.env,
      ...(database._tag === "Postgres" ? { DATABASE_URL: database.url } : { DATA_DIR: database.dataDir })
    },
    stdio: ["ignore", options.outputFd ?? "inherit", options.outputFd ?? "inherit"]
  })
  let exitCode: number | null | undefined
  const exited = new Promise<void>((resolve) =>
    child.once("exit", (code) => {
      exitCode = code
      resolve()
    })
  )
  const stop = async () => {
    if (exitCode !== undefined) return
    child.kill("SIGTERM")
    const killLater = setTimeout(() => child.kill("SIGKILL"), 20_000)
    await exited
    clearTimeout(killLater)
  }
  const deadline = Date.now() + 180_000
  while (!(await answersReady(url))) {
    if (exitCode !== undefined) throw new Error(`the reference server exited with code ${exitCode} before it was ready`)
    if (Date.now() > deadline) {
      await stop()
      throw new Error("the reference server was not ready within 180 s")
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  return { url, pid: child.pid!, stop }
}
