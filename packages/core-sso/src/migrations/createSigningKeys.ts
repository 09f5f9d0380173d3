import { statements } from "./statements"

/** The key pairs that sign id_tokens; retired keys stay published while tokens they signed may still be checked. */
export const createSigningKeys = statements(
  `CREATE TABLE sso.signing_keys (
    kid text PRIMARY KEY,
    private_jwk jsonb NOT NULL,
    public_jwk jsonb NOT NULL,
    created_at timestamptz NOT NULL,
    retired_at timestamptz
  )`
)
