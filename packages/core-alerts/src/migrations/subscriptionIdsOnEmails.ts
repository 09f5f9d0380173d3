import { statements } from "./statements"

/**
 * The subscriptions an email is about, on the email row itself (ids in ascending order, comma-joined; empty for a
 * single email): fan-out no longer writes a second row per email into `email_subscriptions`, with its own key to
 * maintain, and claiming reads them without a lookup per email. Emails written before this migration keep their
 * links in `email_subscriptions` (their column is null) and are read from there until retention deletes them.
 */
export const subscriptionIdsOnEmails = statements(
  `ALTER TABLE alerts.emails ADD COLUMN IF NOT EXISTS subscription_ids text`
)
