import { statements } from "./statements"

/** Checks, the batches that share them, and the webhook attempts of each batch. Priority: 1 high, 0 low. */
export const createLinkcheckTables = statements(
  `CREATE TABLE linkcheck.checks (
    id bigserial PRIMARY KEY,
    uri text NOT NULL,
    host text NOT NULL,
    priority smallint NOT NULL CHECK (priority IN (0, 1)),
    created_at timestamptz NOT NULL,
    completed_at timestamptz,
    status text CHECK (status IN ('ok', 'caution', 'broken')),
    errors jsonb,
    warnings jsonb,
    danger jsonb,
    problem_summary text,
    suggested_fix text,
    claimed_by text,
    claimed_until timestamptz,
    attempts integer NOT NULL DEFAULT 0,
    CHECK ((completed_at IS NULL) = (status IS NULL))
  )`,
  `CREATE INDEX checks_by_uri ON linkcheck.checks (uri, created_at DESC, id DESC)`,
  `CREATE INDEX checks_claimable ON linkcheck.checks (priority DESC, id) WHERE completed_at IS NULL`,
  `CREATE TABLE linkcheck.batches (
    id bigserial PRIMARY KEY,
    created_at timestamptz NOT NULL,
    completed_at timestamptz,
    webhook_uri text,
    webhook_secret_token text,
    pending_links integer NOT NULL CHECK (pending_links >= 0)
  )`,
  `CREATE TABLE linkcheck.batch_links (
    batch_id bigint NOT NULL REFERENCES linkcheck.batches (id) ON DELETE CASCADE,
    position integer NOT NULL,
    check_id bigint NOT NULL REFERENCES linkcheck.checks (id) ON DELETE CASCADE,
    PRIMARY KEY (batch_id, position)
  )`,
  `CREATE INDEX batch_links_by_check ON linkcheck.batch_links (check_id)`,
  `CREATE TABLE linkcheck.webhook_attempts (
    id bigserial PRIMARY KEY,
    batch_id bigint NOT NULL REFERENCES linkcheck.batches (id) ON DELETE CASCADE,
    attempted_at timestamptz NOT NULL,
    status_code integer,
    error text
  )`,
  `CREATE INDEX webhook_attempts_by_batch ON linkcheck.webhook_attempts (batch_id, attempted_at, id)`
)

/** Claims count what every worker holds per host. */
export const indexClaimedChecksByHost = statements(
  `CREATE INDEX checks_claimed_by_host ON linkcheck.checks (host) WHERE completed_at IS NULL AND claimed_until IS NOT NULL`
)

/** Claims take the first waiting checks of each host. */
export const indexWaitingChecksByHost = statements(
  `CREATE INDEX checks_waiting_by_host ON linkcheck.checks (host, priority DESC, id) WHERE completed_at IS NULL`
)

/**
 * Workers announce themselves with heartbeats, so that the claims of a dead one are handed back and live ones share
 * hosts out; claims remember when they were taken (health checks show the oldest); a webhook attempt says whether it
 * ended the delivery.
 */
export const trackWorkersAndFinalAttempts = statements(
  `CREATE TABLE linkcheck.workers (
    id text PRIMARY KEY,
    hostname text NOT NULL,
    pid integer NOT NULL,
    heartbeat_at timestamptz NOT NULL
  )`,
  `CREATE INDEX workers_by_hostname ON linkcheck.workers (hostname)`,
  `ALTER TABLE linkcheck.checks ADD COLUMN claimed_at timestamptz`,
  `CREATE INDEX checks_claimed_by ON linkcheck.checks (claimed_by) WHERE completed_at IS NULL AND claimed_by IS NOT NULL`,
  `ALTER TABLE linkcheck.webhook_attempts ADD COLUMN final boolean NOT NULL DEFAULT false`,
  `UPDATE linkcheck.webhook_attempts SET final = true WHERE status_code IS NOT NULL AND status_code < 500 AND status_code <> 429`
)
