import { JobDefinition, runWorker } from "@civicstack/jobs"
import type { RecurringSchedule } from "@civicstack/jobs"
import { Effect, Schema } from "effect"
import type { DeliverySettings } from "../settings"
import { EmailStore } from "../storage/EmailStore"

/**
 * Blanks and deletes old sent and failed emails, and the notifications' contents no email refers to any more;
 * enqueued by the retention schedule.
 */
export const pruneEmailsJob = JobDefinition.make({
  queue: "alerts.prune-emails",
  payload: Schema.Struct({}),
  maxAttempts: 3,
  leaseDuration: "10 minutes"
})

export const retentionSchedule = (settings: DeliverySettings): RecurringSchedule<{}, {}> => ({
  name: "alerts.prune-emails",
  cron: settings.retentionCron,
  timeZone: settings.scheduleTimeZone,
  definition: pruneEmailsJob,
  payload: {}
})

export const runRetentionWorker = (settings: DeliverySettings) =>
  runWorker(pruneEmailsJob, () =>
    Effect.flatMap(EmailStore, (emails) => emails.prune(settings.retention)).pipe(
      Effect.tap(({ blanked, contentsDeleted, deleted }) =>
        Effect.logInfo(
          `Old emails: ${blanked} blanked, ${deleted} deleted; ${contentsDeleted} notification content(s) deleted`
        ))
    ), { pollInterval: settings.pollInterval, shutdownGracePeriod: settings.shutdownGracePeriod })
