import { statements } from "./statements"

/**
 * A 5000-link batch spent most of its insert on checking each of its links' two foreign keys, row by row, and on an
 * index of waiting checks that `checks_waiting_by_host_hash` already covers (the same rows, the same predicate). The
 * store writes a batch, its checks and its links in one transaction with the checks locked, and deletes a batch's
 * links with the batch, so the keys guarded nothing it does not guard itself.
 */
export const lightenBatchWrites = statements(
  `DROP INDEX linkcheck.checks_claimable`,
  `ALTER TABLE linkcheck.batch_links DROP CONSTRAINT batch_links_batch_id_fkey,
    DROP CONSTRAINT batch_links_check_id_fkey`
)
