import { statements } from "./statements"

/**
 * The one-time links sent by email (invitations and password resets): only a hash of each link's token is kept, so a
 * copy of the database holds no working link.
 */
export const createEmailLinks = statements(
  `CREATE TABLE sso.email_links (
    id text PRIMARY KEY,
    user_uid text NOT NULL REFERENCES sso.users (uid) ON DELETE CASCADE,
    purpose text NOT NULL CHECK (purpose IN ('invitation', 'password_reset')),
    token_hash text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at timestamptz
  )`,
  `CREATE INDEX email_links_by_user ON sso.email_links (user_uid) WHERE used_at IS NULL`,
  `CREATE INDEX email_links_by_expiry ON sso.email_links (expires_at)`
)
