import { statements } from "./statements"

/**
 * Emails as rows that workers claim, with the unique keys that make fan-out and digests idempotent; the lists each
 * notification matched (digests reuse them); digest runs, one per frequency and window.
 */
export const createEmailTables = statements(
  `CREATE TABLE alerts.notification_matches (
    notification_id uuid NOT NULL REFERENCES alerts.notifications (id),
    subscriber_list_id bigint NOT NULL REFERENCES alerts.subscriber_lists (id),
    PRIMARY KEY (notification_id, subscriber_list_id)
  )`,
  // digests look for the notifications of a window
  `CREATE INDEX notifications_by_created_at ON alerts.notifications (created_at)`,
  // fan-out walks a list's active subscribers by id range
  `CREATE INDEX subscriptions_active_by_list_and_subscriber
    ON alerts.subscriptions (subscriber_list_id, frequency, subscriber_id) WHERE ended_at IS NULL`,
  `CREATE TABLE alerts.digest_runs (
    id uuid PRIMARY KEY,
    frequency text NOT NULL CHECK (frequency IN ('daily', 'weekly')),
    window_start timestamptz NOT NULL,
    window_end timestamptz NOT NULL,
    created_at timestamptz NOT NULL,
    completed_at timestamptz,
    CONSTRAINT digest_runs_window_key UNIQUE (frequency, window_end)
  )`,
  `CREATE TABLE alerts.emails (
    id uuid PRIMARY KEY,
    address text NOT NULL,
    subject text NOT NULL,
    body text,
    status text NOT NULL CHECK (status IN ('pending', 'sending', 'sent', 'failed')),
    attempts integer NOT NULL,
    next_attempt_at timestamptz NOT NULL,
    claimed_until timestamptz,
    failure_reason text,
    notification_id uuid,
    subscriber_id bigint,
    digest_run_id uuid,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    sent_at timestamptz
  )`,
  // no foreign keys on the email rows: fan-out writes them by the hundred thousand, and each key would be a lookup
  // per row; the statements that write them take the ids from the rows they refer to
  `CREATE UNIQUE INDEX emails_notification_subscriber_key ON alerts.emails (notification_id, subscriber_id)
    WHERE notification_id IS NOT NULL`,
  `CREATE UNIQUE INDEX emails_digest_run_subscriber_key ON alerts.emails (digest_run_id, subscriber_id)
    WHERE digest_run_id IS NOT NULL`,
  // claiming, in next_attempt_at order: due pending emails, and sending ones whose lease (kept in next_attempt_at too)
  // ran out; partial, so that the oldest due are read first however many wait
  `CREATE INDEX emails_claimable ON alerts.emails (next_attempt_at) WHERE status IN ('pending', 'sending')`,
  `CREATE INDEX emails_pending_immediate ON alerts.emails (created_at) WHERE status = 'pending' AND digest_run_id IS NULL`,
  `CREATE INDEX emails_finished ON alerts.emails (created_at) WHERE status IN ('sent', 'failed')`,
  `CREATE TABLE alerts.email_subscriptions (
    email_id uuid NOT NULL REFERENCES alerts.emails (id) ON DELETE CASCADE,
    subscription_id uuid NOT NULL,
    PRIMARY KEY (email_id, subscription_id)
  )`
)
