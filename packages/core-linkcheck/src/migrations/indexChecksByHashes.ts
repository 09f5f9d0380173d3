import { statements } from "./statements"

/**
 * A btree entry holds at most about 2.7 kB, so an index on the uri or the host refused any check of a long one.
 * Checks are indexed by the SHA-256 of their uri and host instead; the store fills both hashes on insert.
 */
export const indexChecksByHashes = statements(
  `DROP INDEX linkcheck.checks_by_uri`,
  `DROP INDEX linkcheck.checks_waiting_by_host`,
  `DROP INDEX linkcheck.checks_claimed_by_host`,
  `ALTER TABLE linkcheck.checks ADD COLUMN uri_hash bytea, ADD COLUMN host_hash bytea`,
  `UPDATE linkcheck.checks
    SET uri_hash = sha256(convert_to(uri, 'UTF8')), host_hash = sha256(convert_to(host, 'UTF8'))`,
  `ALTER TABLE linkcheck.checks ALTER COLUMN uri_hash SET NOT NULL, ALTER COLUMN host_hash SET NOT NULL`,
  `CREATE INDEX checks_by_uri_hash ON linkcheck.checks (uri_hash, created_at DESC, id DESC)`,
  `CREATE INDEX checks_waiting_by_host_hash ON linkcheck.checks (host_hash, priority DESC, id)
    WHERE completed_at IS NULL`,
  `CREATE INDEX checks_claimed_by_host_hash ON linkcheck.checks (host_hash)
    WHERE completed_at IS NULL AND claimed_until IS NOT NULL`
)
