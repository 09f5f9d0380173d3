import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Array, Effect, Option, Redacted } from "effect"
import { failWith } from "../benchError"
import { processCpuMs } from "./procfs"

/** CPU time so far of each PostgreSQL backend connected to one database, by process id. */
export type BackendsCpu = ReadonlyMap<number, number>

/**
 * Reads the CPU time of the backends serving `databaseUrl`'s database, through a connection to another database
 * of the same server. Only backends of a server on this machine can be read; the others are left out.
 */
export const backendsCpu = (databaseUrl: string, adminUrl: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const database = decodeURIComponent(new URL(databaseUrl).pathname.slice(1))
    const rows = yield* sql<{ readonly pid: number }>`SELECT pid FROM pg_stat_activity WHERE datname = ${database}`
    const readings = yield* Effect.forEach(rows, ({ pid }) =>
      Effect.map(Effect.option(processCpuMs(pid)), Option.map((cpuMs) => [pid, cpuMs] as const)))
    const cpu: BackendsCpu = new Map(Array.getSomes(readings))
    return cpu
  }).pipe(
    Effect.provide(PgClient.layer({ url: Redacted.make(adminUrl), maxConnections: 1 })),
    Effect.mapError(failWith("cannot read the database backends' CPU time"))
  )

/** CPU time the backends used between two readings; null when none could be read (a server on another machine). */
export const backendsCpuSince = (before: BackendsCpu, after: BackendsCpu): number | null => {
  if (after.size === 0) return null
  let total = 0
  for (const [pid, cpuMs] of after) total += cpuMs - (before.get(pid) ?? 0)
  return total
}
