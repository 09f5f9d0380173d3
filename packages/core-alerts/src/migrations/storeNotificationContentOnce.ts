import { statements } from "./statements"

/**
 * A notification's immediate emails share their subject and all their body but the unsubscribe lines (up to ~130 KB),
 * which each email row used to hold a copy of. That content is now stored once per notification, and a fan-out's
 * email rows hold only the subscriber's unsubscribe lines, with `subject` and `body` null: the notification id they
 * already carry refers to the content. Rows written before keep their whole subject and body and are sent as they
 * are. `fanned_out_at` is when a fan-out last stored or reused the content: retention keeps content that a fan-out
 * may still be writing emails for, even when no email refers to it yet.
 */
export const storeNotificationContentOnce = statements(
  `CREATE TABLE IF NOT EXISTS alerts.notification_contents (
    notification_id uuid PRIMARY KEY,
    subject text NOT NULL,
    body_before text NOT NULL,
    body_after text NOT NULL,
    fanned_out_at timestamptz NOT NULL
  )`,
  `ALTER TABLE alerts.emails ADD COLUMN IF NOT EXISTS unsubscribe_lines text`,
  `ALTER TABLE alerts.emails ALTER COLUMN subject DROP NOT NULL`
)
