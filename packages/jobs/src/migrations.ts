import { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { migrateSchema } from "@civicstack/kit"

const statements = (...texts: ReadonlyArray<string>) =>
  Effect.flatMap(SqlClient, (sql) => Effect.forEach(texts, (text) => sql.unsafe(text), { discard: true }))

const createJobs = statements(
  `CREATE TABLE jobs.jobs (
    id bigserial PRIMARY KEY,
    queue text NOT NULL,
    payload jsonb NOT NULL,
    state text NOT NULL CHECK (state IN ('queued', 'running', 'dead')),
    priority integer NOT NULL DEFAULT 0,
    run_at timestamptz NOT NULL,
    attempts integer NOT NULL DEFAULT 0,
    max_attempts integer NOT NULL CHECK (max_attempts >= 1),
    dedupe_key text,
    last_error text,
    locked_by text,
    locked_until timestamptz,
    claim_token text,
    created_at timestamptz NOT NULL,
    failed_at timestamptz
  )`,
  `CREATE INDEX jobs_claimable ON jobs.jobs (queue, priority DESC, run_at, id) WHERE state = 'queued'`,
  `CREATE INDEX jobs_leases ON jobs.jobs (queue, locked_until) WHERE state = 'running'`,
  `CREATE INDEX jobs_dead ON jobs.jobs (queue, failed_at DESC) WHERE state = 'dead'`,
  `CREATE UNIQUE INDEX jobs_dedupe ON jobs.jobs (queue, dedupe_key) WHERE dedupe_key IS NOT NULL AND state <> 'dead'`,
  `CREATE TABLE jobs.schedules (
    name text PRIMARY KEY,
    last_slot timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`
)

/** The span each job's own span links to: the request (or other work) that enqueued it. */
const linkJobsToTraces = statements(`ALTER TABLE jobs.jobs ADD COLUMN trace_parent text`)

/** Creates the `jobs` schema and brings its tables up to date; safe to run from several copies at once. */
export const migrate = migrateSchema({
  schema: "jobs",
  lockKey: 7_461_802_331,
  migrations: { "1_create_jobs": createJobs, "2_link_jobs_to_traces": linkJobsToTraces }
})
