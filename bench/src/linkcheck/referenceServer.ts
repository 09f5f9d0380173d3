import { randomBytes } from "node:crypto"
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { Command, type CommandExecutor, HttpClient } from "@effect/platform"
import { Effect, Schedule, type Scope } from "effect"
import { createRequire } from "node:module"
import { createServer } from "node:net"
import type { AddressInfo } from "node:net"
import { dirname, join } from "node:path"
import { BenchError, failWith } from "../benchError"
import { serverMallocEnv, serverNodeFlags } from "../serverLaunch"
import { type ChildOutput, followOutput, unlessExited } from "./childOutput"
import type { Limits } from "./linkPlan"

const serverPackage = dirname(createRequire(import.meta.url).resolve("@civicstack/server/package.json"))

export type ServerDatabase =
  | { readonly _tag: "Postgres"; readonly url: string }
  | { readonly _tag: "Pglite"; readonly dataDir: string }

export interface ReferenceServer {
  readonly url: string
  readonly pid: number
  /** An API token of a user with `signin` on `link-checker-api`, ensured by the server's bootstrap file. */
  readonly token: string
  /** Fails if the server exits before the scope closes. */
  readonly exited: Effect.Effect<never, BenchError>
}

const freePort = Effect.async<number, BenchError>((resume) => {
  const probe = createServer()
  probe.once("error", (cause) => resume(Effect.fail(new BenchError({ message: "cannot find a free port", cause }))))
  probe.listen(0, "127.0.0.1", () => {
    const { port } = probe.address() as AddressInfo
    probe.close(() => resume(Effect.succeed(port)))
  })
})

const awaitReady = (url: string, output: ChildOutput) =>
  unlessExited(
    output,
    Effect.flatMap(HttpClient.HttpClient, (client) =>
      client.get(`${url}/healthcheck/ready`).pipe(
        Effect.timeout("2 seconds"),
        Effect.filterOrFail((response) => response.status === 200),
        Effect.retry(Schedule.spaced("200 millis")),
        Effect.asVoid
      )),
    "ready answer from the reference server",
    "120 seconds"
  )

/** SIGTERM, then SIGKILL if the server is still running after its grace period and some. */
const stop = (child: CommandExecutor.Process) =>
  child.kill("SIGTERM").pipe(
    Effect.timeout("20 seconds"),
    Effect.orElse(() => child.kill("SIGKILL")),
    Effect.ignore
  )

/**
 * Starts the reference server from its sources in a child process, as `npm start` does, serving link checking
 * only, with the given database and concurrency limits; resolves once it answers ready. Stopped with the scope.
 */
/** A bootstrap file giving the bench's caller its token, removed with the scope. */
const callerBootstrap = (token: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const directory = mkdtempSync(join(tmpdir(), "civicstack-bench-linkcheck-"))
      writeFileSync(join(directory, "bootstrap.json"), JSON.stringify({
        users: [{ email: "bench@bench.example", name: "Bench", api_user: true, permissions: { "link-checker-api": ["signin"] } }],
        api_tokens: [{ user: "bench@bench.example", application: "link-checker-api", token }]
      }))
      return directory
    }),
    (directory) => Effect.sync(() => rmSync(directory, { recursive: true, force: true }))
  ).pipe(Effect.map((directory) => join(directory, "bootstrap.json")))

export const startReferenceServer = (
  database: ServerDatabase,
  limits: Limits
): Effect.Effect<ReferenceServer, BenchError, Scope.Scope | CommandExecutor.CommandExecutor | HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const port = yield* freePort
    const url = `http://127.0.0.1:${port}`
    const token = randomBytes(16).toString("hex")
    const bootstrapFile = yield* callerBootstrap(token)
    const env = {
      CIVICSTACK_BOOTSTRAP: bootstrapFile,
      PATH: process.env.PATH ?? "",
      ...serverMallocEnv(),
      HOST: "127.0.0.1",
      PORT: String(port),
      // sso applies the bootstrap file (only a copy serving sso does) and checks the API token; linkcheck is measured
      SERVICES: "sso,linkcheck",
      LOG_LEVEL: "warning",
      SHUTDOWN_GRACE_SECONDS: "5",
      LINKCHECK_ALLOW_PRIVATE_ADDRESSES: "true",
      LINKCHECK_CONCURRENCY: String(limits.global),
      LINKCHECK_PER_HOST_CONCURRENCY: String(limits.perHost),
      // the server's default (10 ms) unless a run asks for another, as a comparison with linkinator (which has none)
      ...(process.env.BENCH_PER_HOST_INTERVAL_MS === undefined
        ? {}
        : { LINKCHECK_PER_HOST_INTERVAL_MS: process.env.BENCH_PER_HOST_INTERVAL_MS }),
      ...(database._tag === "Postgres" ? { DATABASE_URL: database.url } : { DATA_DIR: database.dataDir })
    }
    // The built server, as ops run it, when `npm run build` has made it; else the sources through tsx (more memory).
    const built = join(serverPackage, "dist", "cli.js")
    const profileDir = process.env.BENCH_SERVER_PROFILE_DIR
    const nodeFlags = [
      ...serverNodeFlags(),
      ...(profileDir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${profileDir}`])
    ]
    const command = existsSync(built)
      ? Command.make(process.execPath, ...nodeFlags, built, "serve")
      : Command.make(
        process.execPath,
        ...nodeFlags,
        "--conditions=@civicstack/source",
        "--import",
        "tsx",
        join(serverPackage, "src", "cli.ts"),
        "serve"
      )
    const child = yield* command.pipe(
      Command.env(env, { extendEnv: false }),
      Command.workingDirectory(serverPackage),
      Command.start,
      Effect.mapError(failWith("cannot start the reference server"))
    )
    yield* Effect.addFinalizer(() => stop(child))
    const output = yield* followOutput(child, "server")
    yield* awaitReady(url, output).pipe(Effect.mapError(failWith("the reference server did not become ready")))
    return { url, pid: child.pid, token, exited: output.exited }
  })
