import { migrateSchema } from "@civicstack/kit"
import {
  createLinkcheckTables,
  indexClaimedChecksByHost,
  indexWaitingChecksByHost,
  trackWorkersAndFinalAttempts
} from "./createLinkcheckTables"
import { checkFragments } from "./checkFragments"
import { indexChecksByHashes } from "./indexChecksByHashes"
import { lightenBatchWrites } from "./lightenBatchWrites"
import { linkBatchesToTraces } from "./linkBatchesToTraces"
import { recordBatchOwners } from "./recordBatchOwners"
import { storeLinkReports } from "./storeLinkReports"

/** Creates the `linkcheck` schema and brings its tables up to date; safe to run from several copies at once. */
export const migrate = migrateSchema({
  schema: "linkcheck",
  lockKey: 5_463_118_920,
  migrations: {
    "1_create_linkcheck": createLinkcheckTables,
    "2_index_waiting_checks_by_host": indexWaitingChecksByHost,
    "3_index_claimed_checks_by_host": indexClaimedChecksByHost,
    "4_index_checks_by_hashes": indexChecksByHashes,
    "5_track_workers_and_final_attempts": trackWorkersAndFinalAttempts,
    "6_lighten_batch_writes": lightenBatchWrites,
    "7_store_link_reports": storeLinkReports,
    "8_record_batch_owners": recordBatchOwners,
    "9_link_batches_to_traces": linkBatchesToTraces,
    "10_check_fragments": checkFragments
  }
})
