export { JobDefinition, type JobDefinitionOptions } from "./definition"
export { InvalidSchedule, JobQueueError } from "./errors"
export {
  type ClaimedJob,
  type ClaimOptions,
  type DeadJob,
  type Enqueued,
  type EnqueueItem,
  type EnqueueOptions,
  type FailOutcome,
  type JobClaim,
  type JobFailure,
  JobQueue,
  QueueStats,
  type ScheduleSlot
} from "./JobQueue"
export { layerMemory } from "./memory"
export { migrate } from "./migrations"
export { type RecurringSchedule, runSchedules, schedulesLayer } from "./schedules"
export { enqueueForEachRow, layerSql, NOTIFY_CHANNEL, type SqlLayerOptions } from "./sql"
export { type JobInfo, runWorker, workerLayer, type WorkerOptions } from "./worker"
