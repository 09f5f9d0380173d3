import type { Connection } from "@effect/sql/SqlConnection"
import type { SqlError } from "@effect/sql/SqlError"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"

/**
 * PGlite runs PostgreSQL as a single process, without the autovacuum launcher: nothing would ever vacuum or analyze
 * its tables. Dead rows and their index entries would pile up, transaction ids would run towards wraparound, and the
 * planner would plan every statement without statistics. This does the launcher's work on the client's session,
 * between statements: every `autovacuum_naptime` it vacuums and analyzes the tables that PostgreSQL's own autovacuum
 * settings say are due, and vacuums the whole database before its transaction ids get old. Setting
 * `autovacuum=off` turns it off, `autovacuum_enabled=false` on a table leaves that table alone.
 */

interface DueTable {
  /** Schema and table, quoted as identifiers. */
  readonly name: string
  readonly vacuum: boolean
}

/** PostgreSQL's autovacuum conditions; a table never analyzed (`reltuples` -1) counts as empty. */
const dueTablesQuery = `
  WITH settings AS (
    SELECT current_setting('autovacuum_vacuum_threshold')::float8 AS vacuum_threshold,
      current_setting('autovacuum_vacuum_scale_factor')::float8 AS vacuum_scale_factor,
      current_setting('autovacuum_vacuum_insert_threshold')::float8 AS insert_threshold,
      current_setting('autovacuum_vacuum_insert_scale_factor')::float8 AS insert_scale_factor,
      current_setting('autovacuum_analyze_threshold')::float8 AS analyze_threshold,
      current_setting('autovacuum_analyze_scale_factor')::float8 AS analyze_scale_factor,
      current_setting('autovacuum_freeze_max_age')::float8 AS freeze_max_age
  ),
  tables AS (
    SELECT format('%I.%I', s.schemaname, s.relname) AS name,
      s.n_dead_tup > t.vacuum_threshold + t.vacuum_scale_factor * greatest(c.reltuples, 0)
        OR (t.insert_threshold >= 0
          AND s.n_ins_since_vacuum > t.insert_threshold + t.insert_scale_factor * greatest(c.reltuples, 0))
        OR age(c.relfrozenxid) > t.freeze_max_age AS vacuum,
      s.n_mod_since_analyze > t.analyze_threshold + t.analyze_scale_factor * greatest(c.reltuples, 0) AS analyze_due
    FROM pg_stat_user_tables s
    JOIN pg_class c ON c.oid = s.relid
    CROSS JOIN settings t
    WHERE c.relkind IN ('r', 'm') AND NOT coalesce(c.reloptions @> ARRAY['autovacuum_enabled=false'], false)
  )
  SELECT name, vacuum FROM tables
  WHERE (vacuum OR analyze_due) AND current_setting('autovacuum')::boolean
  ORDER BY name`

/** Whether the database's oldest transaction id is due for freezing (catalogs included, which only this reaches). */
const databaseFreezeDueQuery = `
  SELECT age(datfrozenxid) > current_setting('autovacuum_freeze_max_age')::float8 AS due FROM pg_database
  WHERE datname = current_database() AND current_setting('autovacuum')::boolean`

/**
 * One pass of the launcher on a session no transaction holds. Statistics are counted per session and written out
 * only now and then; the first statement asks for them at its end, so the second reads this session's latest counts.
 * Returns what it vacuumed or analyzed.
 */
const autovacuumPass = (connection: Connection): Effect.Effect<ReadonlyArray<string>, SqlError> =>
  Effect.gen(function*() {
    yield* connection.executeRaw("SELECT pg_stat_force_next_flush()", [])
    const done: Array<string> = []
    const [database] = (yield* connection.execute(databaseFreezeDueQuery, [], undefined)) as ReadonlyArray<
      { readonly due: boolean }
    >
    if (database?.due === true) {
      yield* connection.executeRaw("VACUUM", [])
      done.push("VACUUM")
    }
    const tables = (yield* connection.execute(dueTablesQuery, [], undefined)) as ReadonlyArray<DueTable>
    for (const table of tables) {
      const statement = table.vacuum ? `VACUUM (ANALYZE) ${table.name}` : `ANALYZE ${table.name}`
      yield* connection.executeRaw(statement, [])
      done.push(statement)
    }
    return done
  })

/** `autovacuum_naptime` (PostgreSQL's default, a minute, if it cannot be read). */
const autovacuumInterval = (connection: Connection): Effect.Effect<Duration.Duration> =>
  connection.execute("SELECT setting::float8 AS seconds FROM pg_settings WHERE name = 'autovacuum_naptime'", [], undefined)
    .pipe(
      Effect.map((rows) => Duration.seconds((rows[0] as { readonly seconds: number } | undefined)?.seconds ?? 60)),
      Effect.orElseSucceed(() => Duration.minutes(1))
    )

/**
 * Runs `autovacuumPass` every `autovacuum_naptime` on a fiber of its own until the scope closes; a pass holds the
 * session (statements sent meanwhile wait for it) and waits for open transactions to end. A failed pass is logged and
 * the next one tries again.
 */
export const runAutovacuum = (
  reserveConnection: Effect.Effect<Connection, never, Scope.Scope>
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.scoped(Effect.flatMap(reserveConnection, autovacuumInterval)).pipe(
    Effect.flatMap((interval) =>
      Effect.scoped(Effect.flatMap(reserveConnection, autovacuumPass)).pipe(
        Effect.tap((done) => done.length === 0 ? Effect.void : Effect.logDebug("PGlite autovacuum", done)),
        Effect.catchAllCause((cause) => Effect.logWarning("PGlite autovacuum failed", cause)),
        Effect.repeat(Schedule.spaced(interval)),
        Effect.delay(interval)
      )
    ),
    Effect.forkScoped,
    Effect.asVoid
  )
