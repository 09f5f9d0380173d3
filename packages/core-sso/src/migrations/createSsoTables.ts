import { statements } from "./statements"

/**
 * Applications, users and their permissions, codes, tokens, sign-in sessions, failed attempts and the event log.
 * Secrets (client ids and secrets, codes, tokens, session ids) are stored only as SHA-256 hashes.
 */
export const createSsoTables = statements(
  `CREATE TABLE sso.applications (
    id text PRIMARY KEY,
    name text NOT NULL UNIQUE,
    description text NOT NULL,
    home_uri text NOT NULL,
    redirect_uris jsonb NOT NULL,
    client_id_hash text NOT NULL UNIQUE,
    client_secret_hash text NOT NULL,
    permissions jsonb NOT NULL,
    push_updates boolean NOT NULL,
    push_format text NOT NULL CHECK (push_format IN ('seed', 'gds-sso')),
    require_pkce boolean NOT NULL,
    retired boolean NOT NULL,
    created_at timestamptz NOT NULL
  )`,
  `CREATE TABLE sso.users (
    uid text PRIMARY KEY,
    name text NOT NULL,
    email text NOT NULL,
    password_hash text,
    is_api_user boolean NOT NULL,
    organisation_slug text,
    organisation_content_id text,
    suspended_at timestamptz,
    suspension_reason text,
    failed_sign_ins integer NOT NULL DEFAULT 0,
    locked_until timestamptz,
    created_at timestamptz NOT NULL
  )`,
  `CREATE UNIQUE INDEX users_by_email ON sso.users (lower(email))`,
  `CREATE TABLE sso.permissions (
    user_uid text NOT NULL REFERENCES sso.users (uid) ON DELETE CASCADE,
    application_id text NOT NULL REFERENCES sso.applications (id) ON DELETE CASCADE,
    names jsonb NOT NULL,
    PRIMARY KEY (user_uid, application_id)
  )`,
  `CREATE TABLE sso.grants (
    code_hash text PRIMARY KEY,
    application_id text NOT NULL REFERENCES sso.applications (id) ON DELETE CASCADE,
    user_uid text NOT NULL REFERENCES sso.users (uid) ON DELETE CASCADE,
    redirect_uri text NOT NULL,
    code_challenge text,
    scopes jsonb NOT NULL,
    nonce text,
    auth_time timestamptz NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at timestamptz
  )`,
  `CREATE TABLE sso.access_tokens (
    id text PRIMARY KEY,
    token_hash text NOT NULL UNIQUE,
    kind text NOT NULL CHECK (kind IN ('oauth', 'api')),
    application_id text NOT NULL REFERENCES sso.applications (id) ON DELETE CASCADE,
    user_uid text NOT NULL REFERENCES sso.users (uid) ON DELETE CASCADE,
    scopes jsonb NOT NULL,
    grant_code_hash text,
    chain_id text,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    revoked_at timestamptz
  )`,
  `CREATE INDEX access_tokens_by_grant ON sso.access_tokens (grant_code_hash) WHERE grant_code_hash IS NOT NULL`,
  `CREATE INDEX access_tokens_by_chain ON sso.access_tokens (chain_id) WHERE chain_id IS NOT NULL`,
  `CREATE INDEX access_tokens_by_user ON sso.access_tokens (user_uid, application_id)`,
  `CREATE TABLE sso.refresh_tokens (
    id text PRIMARY KEY,
    token_hash text NOT NULL UNIQUE,
    application_id text NOT NULL REFERENCES sso.applications (id) ON DELETE CASCADE,
    user_uid text NOT NULL REFERENCES sso.users (uid) ON DELETE CASCADE,
    scopes jsonb NOT NULL,
    grant_code_hash text,
    chain_id text NOT NULL,
    auth_time timestamptz NOT NULL,
    created_at timestamptz NOT NULL,
    used_at timestamptz,
    revoked_at timestamptz
  )`,
  `CREATE INDEX refresh_tokens_by_grant ON sso.refresh_tokens (grant_code_hash) WHERE grant_code_hash IS NOT NULL`,
  `CREATE INDEX refresh_tokens_by_chain ON sso.refresh_tokens (chain_id)`,
  `CREATE INDEX refresh_tokens_by_user ON sso.refresh_tokens (user_uid)`,
  `CREATE TABLE sso.failed_attempts (
    key text NOT NULL,
    at timestamptz NOT NULL
  )`,
  `CREATE INDEX failed_attempts_by_key ON sso.failed_attempts (key, at)`,
  `CREATE TABLE sso.sessions (
    id_hash text PRIMARY KEY,
    user_uid text NOT NULL REFERENCES sso.users (uid) ON DELETE CASCADE,
    csrf_token text NOT NULL,
    auth_time timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL
  )`,
  `CREATE INDEX sessions_by_user ON sso.sessions (user_uid)`,
  `CREATE TABLE sso.events (
    id bigserial PRIMARY KEY,
    at timestamptz NOT NULL,
    kind text NOT NULL,
    user_uid text,
    application_id text,
    detail jsonb NOT NULL
  )`,
  `CREATE INDEX events_by_user ON sso.events (user_uid, at DESC, id DESC)`,
  `CREATE INDEX events_by_time ON sso.events (at DESC, id DESC)`
)
