import { statements } from "./statements"

/**
 * Two-step verification: each user's TOTP secret (sealed like the other secrets the SSO must read back), the step of
 * the last code accepted, and hashes of their recovery codes. A secret not yet confirmed is a set-up in progress.
 * A session can wait for its second step; an application can require two-step verification of its users.
 */
export const createTwoStep = statements(
  `CREATE TABLE sso.two_step (
    user_uid text PRIMARY KEY REFERENCES sso.users (uid) ON DELETE CASCADE,
    secret text NOT NULL,
    confirmed_at timestamptz,
    last_step bigint
  )`,
  `CREATE TABLE sso.recovery_codes (
    user_uid text NOT NULL REFERENCES sso.users (uid) ON DELETE CASCADE,
    code_hash text NOT NULL,
    used_at timestamptz,
    PRIMARY KEY (user_uid, code_hash)
  )`,
  `ALTER TABLE sso.sessions ADD COLUMN awaiting_second_step boolean NOT NULL DEFAULT false`,
  `ALTER TABLE sso.applications ADD COLUMN require_two_step boolean NOT NULL DEFAULT false`
)
