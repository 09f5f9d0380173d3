import type { LoadResult } from "./load"

export type Operation = "fixed JSON" | "userinfo" | "refresh"

export interface CaseResult {
  readonly label: string
  readonly system: "ceiling" | "civicstack" | "oidc-provider" | "oidc-provider-pg"
  readonly operation: Operation
  readonly outcome:
    | { readonly _tag: "Measured"; readonly load: LoadResult }
    | { readonly _tag: "NotRun"; readonly reason: string }
}

export interface Environment {
  readonly node: string
  readonly cpus: number
  readonly postgres: string
  readonly seconds: number
  readonly warmupSeconds: number
  readonly connections: number
  readonly users: number
  readonly refreshPool: number
}

const fixed = (value: number, digits: number) => (Number.isFinite(value) ? value.toFixed(digits) : "-")
const row = (cells: ReadonlyArray<string>) => `| ${cells.join(" | ")} |`

const requestsPerSecond = (result: CaseResult | undefined) =>
  result?.outcome._tag === "Measured" ? result.outcome.load.requestsPerSecond : Number.NaN

const resultRow = (result: CaseResult, results: ReadonlyArray<CaseResult>) => {
  if (result.outcome._tag === "NotRun") {
    return row([result.label, "-", "-", "-", "-", "-", "-", "-", "-", "-", `not run: ${result.outcome.reason.replaceAll("|", "/")}`])
  }
  const { load } = result.outcome
  const ceilings = results.filter((other) => other.system === "ceiling").map(requestsPerSecond).filter(Number.isFinite)
  const ceiling = ceilings.length === 0 ? Number.NaN : Math.max(...ceilings)
  const peerOf = (system: CaseResult["system"]) =>
    requestsPerSecond(results.find((other) => other.system === system && other.operation === result.operation))
  const notes = [
    load.poolExhausted ? `pool of ${load.requests} used up` : undefined
  ].filter((note) => note !== undefined)
  return row([
    result.label,
    fixed(load.requestsPerSecond, 0),
    fixed(load.p99Ms, 1),
    `${load.errors} / ${load.non2xx}`,
    `${load.requests} in ${fixed(load.seconds, 1)} s`,
    load.cpu === undefined ? "-" : fixed(load.cpu.serverSeconds * 1000 / load.requests, 3),
    load.cpu?.databaseSeconds === undefined ? "-" : fixed(load.cpu.databaseSeconds * 1000 / load.requests, 3),
    fixed(load.requestsPerSecond / ceiling, 2),
    result.system === "civicstack" ? fixed(load.requestsPerSecond / peerOf("oidc-provider"), 2) : "-",
    result.system === "civicstack" && result.label.includes("-pg ")
      ? fixed(load.requestsPerSecond / peerOf("oidc-provider-pg"), 2)
      : "-",
    notes.join("; ")
  ])
}

/** The printed report, as markdown. */
export const renderReport = (results: ReadonlyArray<CaseResult>, environment: Environment): string =>
  [
    `## SSO throughput: ${environment.connections} connections, ${environment.seconds} s per case after ${environment.warmupSeconds} s of warm-up (autocannon, loopback)`,
    "",
    `Node ${environment.node}, ${environment.cpus} CPUs, PostgreSQL ${environment.postgres}; ${environment.users} API tokens / access tokens in rotation, refresh pools of ${environment.refreshPool}.`,
    "",
    row(["case", "requests/s", "p99 ms", "errors / non-2xx", "requests", "server CPU ms / request", "database CPU ms / request", "÷ ceiling", "÷ oidc-provider", "÷ oidc-provider-pg", "note"]),
    row(["---", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---"]),
    ...results.map((result) => resultRow(result, results)),
    "",
    "- requests/s: requests answered over the time the case actually ran (a refresh case ends early when its pool of single-use refresh tokens is used up).",
    "- ÷ ceiling: against a bare node:http server answering a fixed JSON body, measured first and (with other cases) again at the end; the higher of the two is used; ÷ oidc-provider: against oidc-provider's same operation (userinfo for /user.json, the refresh grant for refresh) with its memory adapter; ÷ oidc-provider-pg: the civicstack-pg rows against oidc-provider with its tokens in PostgreSQL (a bench-only adapter, src/sso/oidcProviderPgAdapter.ts).",
    "- server CPU ms / request: user + system CPU of the server's process during the measured run (warm-up excluded) over the requests answered; database CPU ms / request: the same of every `postgres` process on the machine, or, on PGlite, of the server's thread named `pglite` that runs the embedded database (then left out of the server's figure; V8's garbage collection helpers, which both threads share, stay in the server's).",
    "- autocannon runs in the bench process, on the same CPUs as the server under test."
  ].join("\n")
