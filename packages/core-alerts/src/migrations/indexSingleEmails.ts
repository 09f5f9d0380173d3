import { statements } from "./statements"

/** The emails about no subscription (auth tokens) by address: how many an address was sent lately limits the next. */
export const indexSingleEmails = statements(
  `CREATE INDEX emails_single_by_address ON alerts.emails (address, created_at)
    WHERE notification_id IS NULL AND digest_run_id IS NULL`
)
