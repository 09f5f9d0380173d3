import { JobDefinition, runWorker } from "@civicstack/jobs"
import type { RecurringSchedule } from "@civicstack/jobs"
import { Clock, Duration, Effect, Schema } from "effect"
import { LinkcheckParts } from "../services/LinkcheckParts"

/** Deletes checks completed longer ago than the retention, with the batches that contain them. */
export const cleanupOldChecksJob = JobDefinition.make({
  queue: "linkcheck.cleanup",
  payload: Schema.Struct({ retentionSeconds: Schema.Int.pipe(Schema.positive()) }),
  maxAttempts: 3
})

export const cleanupSchedule = (retention: Duration.DurationInput): RecurringSchedule<
  typeof cleanupOldChecksJob.payload.Type,
  typeof cleanupOldChecksJob.payload.Encoded
> => ({
  name: "linkcheck.cleanup",
  cron: "17 3 * * *",
  timeZone: "UTC",
  definition: cleanupOldChecksJob,
  payload: { retentionSeconds: Math.round(Duration.toSeconds(retention)) }
})

export const deleteOldChecks = (retentionSeconds: number) =>
  Effect.gen(function*() {
    const { store } = yield* LinkcheckParts
    const before = new Date((yield* Clock.currentTimeMillis) - retentionSeconds * 1000)
    const deleted = yield* store.deleteCompletedBefore(before)
    yield* Effect.logInfo("Deleted old link checks").pipe(Effect.annotateLogs({ ...deleted, before: before.toISOString() }))
  })

export const runCleanupWorker = runWorker(cleanupOldChecksJob, ({ retentionSeconds }) => deleteOldChecks(retentionSeconds))
