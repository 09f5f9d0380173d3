import { statements } from "./statements"

/**
 * Drops the foreign key from `email_subscriptions` to `emails`: fan-out writes a link per email in the statement that
 * writes the email, and the key's check per row made that statement about a third slower. Retention deletes an
 * email's links with the email.
 */
export const unlinkEmailSubscriptions = statements(
  `ALTER TABLE alerts.email_subscriptions DROP CONSTRAINT IF EXISTS email_subscriptions_email_id_fkey`
)
