/**
 * SSO bench: `npm run bench:sso` (see bench/README.md). autocannon on loopback against the reference server's
 * `GET /user.json` and refresh grant, on PGlite and on PostgreSQL, beside oidc-provider 9's userinfo and refresh
 * grant and a bare node:http server as the machine's ceiling. Each server runs in a child process; progress goes to
 * stderr, the markdown report to stdout.
 */
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Exit, Redacted, Scope } from "effect"
import * as Fs from "node:fs/promises"
import { availableParallelism, tmpdir } from "node:os"
import * as Path from "node:path"
import { freshDatabase } from "./freshDatabase"
import { benchApplication, writeBootstrap } from "./sso/bootstrap"
import { startChildServer } from "./sso/childServer"
import type { CpuMeter } from "./sso/cpu"
import { type LoadOptions, type LoadRequest, type LoadResult, warmUpThenRunLoad } from "./sso/load"
import type { OidcProviderDescription } from "./sso/oidcProviderMain"
import { obtainRefreshTokens } from "./sso/refreshPool"
import { type ServerDatabase, startReferenceServer } from "./sso/referenceServer"
import { type CaseResult, type Operation, renderReport } from "./sso/report"
import { loadSettings } from "./sso/settings"

const settings = loadSettings()
const progress = (message: string) => process.stderr.write(`${message}\n`)

const bearer = (path: string, token: string): LoadRequest => ({
  method: "GET",
  path,
  headers: { authorization: `Bearer ${token}` }
})

const refreshGrant = (path: string, refreshToken: string, clientId: string, clientSecret: string): LoadRequest => ({
  method: "POST",
  path,
  headers: { "content-type": "application/x-www-form-urlencoded" },
  body: new URLSearchParams({
    grant_type: "refresh_token",
    refresh_token: refreshToken,
    client_id: clientId,
    client_secret: clientSecret
  }).toString()
})

/** One request outside the measurement, so that a case whose requests are refused fails loudly instead of measuring 401s. */
const expectAnswer = async (url: string, request: LoadRequest) => {
  const response = await fetch(new URL(request.path, url), { method: request.method, headers: request.headers })
  if (response.status !== 200) throw new Error(`${request.method} ${request.path} answered ${response.status}: ${await response.text()}`)
}

const load = (url: string, requests: ReadonlyArray<LoadRequest>, use: LoadOptions["use"], meter?: CpuMeter) =>
  warmUpThenRunLoad(
    { url, connections: settings.connections, seconds: settings.seconds, requests, use },
    settings.warmupSeconds,
    meter
  )

const measure = async (
  label: string,
  system: CaseResult["system"],
  operation: Operation,
  run: () => Promise<LoadResult>
): Promise<CaseResult> => {
  progress(`--- ${label}: ${settings.connections} connections, ${settings.warmupSeconds} s warm-up, up to ${settings.seconds} s`)
  try {
    const load = await run()
    progress(`${label}: ${load.requestsPerSecond.toFixed(0)} requests/s, p99 ${load.p99Ms} ms, ${load.non2xx} non-2xx`)
    return { label, system, operation, outcome: { _tag: "Measured", load } }
  } catch (error) {
    progress(`${label} failed: ${String(error)}`)
    return { label, system, operation, outcome: { _tag: "NotRun", reason: `failed: ${String(error)}` } }
  }
}

const notRun = (label: string, system: CaseResult["system"], operation: Operation, reason: string): CaseResult => ({
  label,
  system,
  operation,
  outcome: { _tag: "NotRun", reason }
})

const ceilingCase = async (label: string): Promise<CaseResult> => {
  const ceiling = await startChildServer<{ url: string }>("ceilingMain.ts")
  try {
    return await measure(label, "ceiling", "fixed JSON", () =>
      load(ceiling.description.url, [{ method: "GET", path: "/user.json", headers: {} }], "rotate", {
        serverPid: ceiling.pid,
        database: "none"
      }))
  } finally {
    await ceiling.stop()
  }
}

const civicstackCases = async (backend: "pglite" | "pg", database: ServerDatabase): Promise<Array<CaseResult>> => {
  const userLabel = `civicstack-${backend} /user.json`
  const refreshLabel = `civicstack-${backend} refresh`
  const bootstrap = await writeBootstrap(settings.users)
  try {
    progress(`--- civicstack-${backend}: starting the reference server, bootstrap of ${settings.users} users with API tokens`)
    const startedAt = Date.now()
    const server = await startReferenceServer(database, bootstrap.file)
    progress(`civicstack-${backend}: ready after ${((Date.now() - startedAt) / 1000).toFixed(1)} s`)
    const meter = { serverPid: server.pid, database: backend === "pg" ? "postgres" : "pglite-thread" } as const
    try {
      const userRequests = bootstrap.apiTokens.map((token) => bearer("/user.json", token))
      const user = await measure(userLabel, "civicstack", "userinfo", async () => {
        await expectAnswer(server.url, userRequests[0]!)
        return load(server.url, userRequests, "rotate", meter)
      })
      const refresh = await measure(refreshLabel, "civicstack", "refresh", async () => {
        progress(`${refreshLabel}: obtaining ${settings.refreshPool} refresh tokens through the authorization code flow`)
        const poolStartedAt = Date.now()
        const refreshTokens = await obtainRefreshTokens(server.url, settings.refreshPool, 8, (obtained) =>
          progress(`${refreshLabel}: ${obtained} refresh tokens`))
        progress(`${refreshLabel}: pool ready after ${((Date.now() - poolStartedAt) / 1000).toFixed(1)} s`)
        const requests = refreshTokens.map((token) =>
          refreshGrant("/oauth/token", token, benchApplication.clientId, benchApplication.clientSecret))
        return load(server.url, requests, "single-use", meter)
      })
      return [user, refresh]
    } finally {
      await server.stop()
    }
  } catch (error) {
    progress(`civicstack-${backend} failed: ${String(error)}`)
    return [
      notRun(userLabel, "civicstack", "userinfo", `failed: ${String(error)}`),
      notRun(refreshLabel, "civicstack", "refresh", `failed: ${String(error)}`)
    ]
  } finally {
    await bootstrap.remove()
  }
}

const pgliteCases = async () => {
  const dataDir = await Fs.mkdtemp(Path.join(tmpdir(), "civicstack-bench-sso-data-"))
  try {
    return await civicstackCases("pglite", { _tag: "Pglite", dataDir })
  } finally {
    await Fs.rm(dataDir, { recursive: true, force: true })
  }
}

const serverVersion = (url: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ server_version: string }>`SHOW server_version`).pipe(
    Effect.map((rows) => rows[0]?.server_version ?? "unknown"),
    Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })),
    Effect.orElseSucceed(() => "unknown")
  )

/** On a fresh `bench_sso_<random>` database, dropped afterwards; not run when the server cannot be reached. */
const postgresCases = async (): Promise<{ results: Array<CaseResult>; postgres: string }> => {
  const scope = Effect.runSync(Scope.make())
  try {
    const created = await Effect.runPromiseExit(Scope.extend(freshDatabase(settings.databaseUrl, "sso"), scope))
    if (Exit.isFailure(created)) {
      const reason = `PostgreSQL unreachable at ${settings.databaseUrl}`
      progress(`--- civicstack-pg: ${reason}`)
      return {
        postgres: "unreachable",
        results: [
          notRun("civicstack-pg /user.json", "civicstack", "userinfo", reason),
          notRun("civicstack-pg refresh", "civicstack", "refresh", reason)
        ]
      }
    }
    const postgres = await Effect.runPromise(serverVersion(created.value.url))
    return { postgres, results: await civicstackCases("pg", { _tag: "Postgres", url: created.value.url }) }
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

/** oidc-provider with its memory adapter, or on the database of `databaseUrl` through the bench's adapter. */
const oidcProviderCases = async (
  system: "oidc-provider" | "oidc-provider-pg",
  databaseUrl?: string
): Promise<Array<CaseResult>> => {
  progress(`--- ${system}: minting ${settings.users} access tokens and ${settings.refreshPool} refresh tokens`)
  const provider = await startChildServer<OidcProviderDescription>("oidcProviderMain.ts", [
    String(settings.users),
    String(settings.refreshPool),
    ...(databaseUrl === undefined ? [] : [databaseUrl])
  ])
  try {
    const { url, clientId, clientSecret, accessTokens, refreshTokens } = provider.description
    const meter = { serverPid: provider.pid, database: databaseUrl === undefined ? "none" : "postgres" } as const
    const userinfoRequests = accessTokens.map((token) => bearer("/me", token))
    const userinfo = await measure(`${system} userinfo`, system, "userinfo", async () => {
      await expectAnswer(url, userinfoRequests[0]!)
      return load(url, userinfoRequests, "rotate", meter)
    })
    const refresh = await measure(`${system} refresh`, system, "refresh", () =>
      load(url, refreshTokens.map((token) => refreshGrant("/token", token, clientId, clientSecret)), "single-use", meter))
    return [userinfo, refresh]
  } finally {
    await provider.stop()
  }
}

/** oidc-provider on a fresh `bench_sso_<random>` database; not run when the server cannot be reached. */
const oidcProviderPgCases = async (): Promise<Array<CaseResult>> => {
  const scope = Effect.runSync(Scope.make())
  try {
    const created = await Effect.runPromiseExit(Scope.extend(freshDatabase(settings.databaseUrl, "sso"), scope))
    if (Exit.isFailure(created)) {
      const reason = `PostgreSQL unreachable at ${settings.databaseUrl}`
      return [
        notRun("oidc-provider-pg userinfo", "oidc-provider-pg", "userinfo", reason),
        notRun("oidc-provider-pg refresh", "oidc-provider-pg", "refresh", reason)
      ]
    }
    return await oidcProviderCases("oidc-provider-pg", created.value.url)
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

const results: Array<CaseResult> = []
let postgres = "not used"
if (settings.only.has("ceiling")) results.push(await ceilingCase("ceiling (node:http, fixed JSON)"))
if (settings.only.has("pglite")) results.push(...(await pgliteCases()))
if (settings.only.has("pg")) {
  const outcome = await postgresCases()
  postgres = outcome.postgres
  results.push(...outcome.results)
}
if (settings.only.has("oidc-provider")) results.push(...(await oidcProviderCases("oidc-provider")))
if (settings.only.has("oidc-provider-pg")) results.push(...(await oidcProviderPgCases()))
// The first measurement of a run has come out low (a case after it answered more): the ceiling is measured again at
// the end, and the ratios to it use the higher of the two.
if (settings.only.has("ceiling") && settings.only.size > 1) results.push(await ceilingCase("ceiling, measured again at the end"))

process.stdout.write(
  `${renderReport(results, {
    node: process.version,
    cpus: availableParallelism(),
    postgres,
    seconds: settings.seconds,
    warmupSeconds: settings.warmupSeconds,
    connections: settings.connections,
    users: settings.users,
    refreshPool: settings.refreshPool
  })}\n`
)
