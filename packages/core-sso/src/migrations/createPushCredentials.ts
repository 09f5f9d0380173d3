import { statements } from "./statements"

/** The push user's token per application: the one secret the SSO keeps readable, because it presents it. */
export const createPushCredentials = statements(
  `CREATE TABLE sso.push_credentials (
    application_id text PRIMARY KEY REFERENCES sso.applications (id) ON DELETE CASCADE,
    token_id text NOT NULL,
    token text NOT NULL,
    expires_at timestamptz NOT NULL
  )`
)
