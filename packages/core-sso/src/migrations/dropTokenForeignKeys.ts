import { statements } from "./statements"

/**
 * Access and refresh tokens without foreign keys to their user and application. Users and applications are never
 * deleted (they are suspended and retired), and every token is written after its user and application are read (a
 * code's grant, a refresh token's predecessor, an API token's checks), so the keys only checked what holds; that check
 * locked the user's and the application's rows for every token written, a quarter of a refresh grant's database time.
 */
export const dropTokenForeignKeys = statements(
  `ALTER TABLE sso.access_tokens DROP CONSTRAINT IF EXISTS access_tokens_application_id_fkey`,
  `ALTER TABLE sso.access_tokens DROP CONSTRAINT IF EXISTS access_tokens_user_uid_fkey`,
  `ALTER TABLE sso.refresh_tokens DROP CONSTRAINT IF EXISTS refresh_tokens_application_id_fkey`,
  `ALTER TABLE sso.refresh_tokens DROP CONSTRAINT IF EXISTS refresh_tokens_user_uid_fkey`
)
