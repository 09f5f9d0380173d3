import { spawn } from "node:child_process"
import { randomBytes, randomUUID } from "node:crypto"
import { existsSync } from "node:fs"
import * as Fs from "node:fs/promises"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { answersReady, freeLoopbackPort, serverMallocEnv, serverNodeFlags } from "../serverLaunch"

/** Server settings passed on from the bench's environment when set. */
const SERVER_TUNING = ["ALERTS_FAN_OUT_CHUNK_CONCURRENCY", "DATABASE_POOL_SIZE"] as const

const serverPackage = dirname(createRequire(import.meta.url).resolve("@civicstack/server/package.json"))
const repositoryRoot = dirname(dirname(serverPackage))

export type ServerDatabase =
  | { readonly _tag: "Postgres"; readonly url: string }
  | { readonly _tag: "Pglite"; readonly dataDir: string }

export interface ReferenceServer {
  readonly url: string
  readonly pid: number
  /** An API token of a user with `signin` on `email-alert-api`, from the bootstrap file. */
  readonly token: string
  readonly stop: () => Promise<void>
}

export interface ServerOptions {
  /** `web` serves the API only, `workers` runs fan-out and delivery only, `web,workers` does both. */
  readonly run: "web" | "workers" | "web,workers"
  readonly notifySinkUrl: string
  readonly emailRateLimit: number
}

/** The same caller token for every start of one case, so the bench can keep it. */
export const benchCallerToken = randomBytes(16).toString("hex")

const writeBootstrap = async () => {
  const directory = await Fs.mkdtemp(join(tmpdir(), "civicstack-bench-alerts-"))
  const file = join(directory, "bootstrap.json")
  await Fs.writeFile(file, JSON.stringify({
    users: [{ email: "bench@bench.example", name: "Bench", api_user: true, permissions: { "email-alert-api": ["signin"] } }],
    api_tokens: [{ user: "bench@bench.example", application: "email-alert-api", token: benchCallerToken }]
  }))
  return { file, remove: () => Fs.rm(directory, { recursive: true, force: true }) }
}

/** `{key_name}-{service_id}-{secret_key}`, as the notify provider expects; the sink checks nothing. */
const notifyApiKey = `bench-${randomUUID()}-${randomUUID()}`

/** Given, so that a server on PostgreSQL (no DATA_DIR) does not make one and keep it in `./data` of the repository. */
const authTokenSecret = randomBytes(32).toString("hex")

/**
 * Starts the built reference server as the README runs it in production (`serverLaunch.ts`), serving email alerts
 * (and the sign-on that checks its callers) and sending through the `notify` provider to the bench's sink; resolves
 * once it answers ready. The child is the server's own Node process, so its pid is the one to read /proc of.
 */
export const startReferenceServer = async (database: ServerDatabase, options: ServerOptions): Promise<ReferenceServer> => {
  const built = join(serverPackage, "dist", "cli.js")
  if (!existsSync(built)) throw new Error(`${built} is missing: run \`npm run build\` first`)
  const port = await freeLoopbackPort()
  const url = `http://127.0.0.1:${port}`
  const bootstrap = await writeBootstrap()
  const child = spawn(process.execPath, [...serverNodeFlags(), built, "serve"], {
    cwd: repositoryRoot,
    env: {
      PATH: process.env.PATH ?? "",
      ...serverMallocEnv(),
      HOST: "127.0.0.1",
      PORT: String(port),
      PUBLIC_SITE_URL: url,
      // sso applies the bootstrap file and checks the API token; alerts is what is measured
      SERVICES: "sso,alerts",
      RUN: options.run,
      LOG_LEVEL: "warning",
      SHUTDOWN_GRACE_SECONDS: "5",
      CIVICSTACK_BOOTSTRAP: bootstrap.file,
      EMAIL_PROVIDER: "notify",
      NOTIFY_BASE_URL: options.notifySinkUrl,
      NOTIFY_API_KEY: notifyApiKey,
      NOTIFY_TEMPLATE_ID: randomUUID(),
      NOTIFY_ALLOW_PRIVATE_ADDRESSES: "true",
      ALERTS_AUTH_TOKEN_SECRET: authTokenSecret,
      EMAIL_RATE_LIMIT: String(options.emailRateLimit),
      // the health figures must not turn the readiness answer away however long the queue gets
      ALERTS_QUEUE_SIZE_WARNING: "100000000",
      ALERTS_QUEUE_SIZE_CRITICAL: "100000000",
      ...(database._tag === "Postgres" ? { DATABASE_URL: database.url } : { DATA_DIR: database.dataDir }),
      // the server's own tuning, when the bench is run with it (to compare settings)
      ...Object.fromEntries(SERVER_TUNING.flatMap((name) => process.env[name] ? [[name, process.env[name]]] : []))
    },
    stdio: ["ignore", "inherit", "inherit"]
  })
  let exitCode: number | null | undefined
  const exited = new Promise<void>((resolve) =>
    child.once("exit", (code) => {
      exitCode = code
      resolve()
    })
  )
  const stop = async () => {
    if (exitCode === undefined) {
      child.kill("SIGTERM")
      const killLater = setTimeout(() => child.kill("SIGKILL"), 20_000)
      await exited
      clearTimeout(killLater)
    }
    await bootstrap.remove()
  }
  const deadline = Date.now() + 180_000
  while (!(await answersReady(url))) {
    if (exitCode !== undefined || Date.now() > deadline) {
      await stop()
      throw new Error(exitCode !== undefined
        ? `the reference server exited with code ${exitCode} before it was ready`
        : "the reference server was not ready within 180 s")
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  return { url, pid: child.pid!, token: benchCallerToken, stop }
}
