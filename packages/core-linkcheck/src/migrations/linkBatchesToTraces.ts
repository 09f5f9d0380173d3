import { statements } from "./statements"

/** The span of the request that created each batch, which the delivery of its webhook links to. */
export const linkBatchesToTraces = statements(`ALTER TABLE linkcheck.batches ADD COLUMN trace_parent text`)
