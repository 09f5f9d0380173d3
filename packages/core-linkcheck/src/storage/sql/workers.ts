import { Effect, Schema } from "effect"
import type { WorkerHeartbeat } from "../LinkcheckStore"
import { isCheckId, timestamp } from "./rows"
import type { LinkcheckSqlTools } from "./tools"

const WorkerRow = Schema.Struct({ id: Schema.String, pid: Schema.Number })

/** The statements of the workers' registry: heartbeats, and handing back the checks of workers that are gone. */
export const workerStatements = ({ atomically, rows, sql, storeError }: LinkcheckSqlTools) => {
  /** Workers silent for a day are forgotten, so the table stays as small as the fleet. */
  const heartbeat = (beat: WorkerHeartbeat) =>
    atomically(Effect.gen(function*() {
      yield* sql`
        INSERT INTO linkcheck.workers (id, hostname, pid, heartbeat_at)
        VALUES (${beat.workerId}, ${beat.hostname}, ${beat.pid}::integer, ${timestamp(beat.now)}::timestamptz)
        ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at
      `
      yield* sql`
        DELETE FROM linkcheck.workers
        WHERE heartbeat_at < ${timestamp(new Date(beat.now.getTime() - 86_400_000))}::timestamptz
      `
      const holding = JSON.stringify(beat.holding.filter(isCheckId))
      yield* sql`
        UPDATE linkcheck.checks c
        SET claimed_until = CASE WHEN h.held THEN ${timestamp(beat.claimUntil)}::timestamptz END,
          claimed_by = CASE WHEN h.held THEN c.claimed_by END,
          claimed_at = CASE WHEN h.held THEN c.claimed_at END
        FROM (
          SELECT id, id IN (SELECT jsonb_array_elements_text(${holding}::jsonb)::bigint) AS held
          FROM linkcheck.checks
          WHERE claimed_by = ${beat.workerId} AND completed_at IS NULL
          ORDER BY id FOR NO KEY UPDATE
        ) h
        WHERE c.id = h.id
      `
    })).pipe(Effect.mapError(storeError("heartbeat")))

  const workersOn = (hostname: string) =>
    rows("workersOn", WorkerRow, sql`SELECT id, pid FROM linkcheck.workers WHERE hostname = ${hostname}`)

  const retireWorkers = (workerIds: ReadonlyArray<string>) => {
    const ids = JSON.stringify(workerIds)
    return atomically(Effect.gen(function*() {
      yield* sql`
        UPDATE linkcheck.checks SET claimed_by = NULL, claimed_until = NULL, claimed_at = NULL
        WHERE id IN (
          SELECT id FROM linkcheck.checks
          WHERE claimed_by IN (SELECT jsonb_array_elements_text(${ids}::jsonb)) AND completed_at IS NULL
          ORDER BY id FOR NO KEY UPDATE
        )
      `
      yield* sql`DELETE FROM linkcheck.workers WHERE id IN (SELECT jsonb_array_elements_text(${ids}::jsonb))`
    })).pipe(Effect.mapError(storeError("retireWorkers")))
  }

  return { heartbeat, workersOn, retireWorkers }
}
