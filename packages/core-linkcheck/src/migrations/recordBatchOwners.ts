import { statements } from "./statements"

/**
 * A batch belongs to the caller who created it: another caller's `GET /batch/:id` finds nothing. Batches made before
 * this have no owner, and only a caller who sees every batch finds them.
 */
export const recordBatchOwners = statements(`ALTER TABLE linkcheck.batches ADD COLUMN owner text`)
