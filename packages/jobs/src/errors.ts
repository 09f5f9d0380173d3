import { Schema } from "effect"

/** A job queue operation failed: a database error, a payload that cannot be encoded, or invalid enqueue options. */
export class JobQueueError extends Schema.TaggedError<JobQueueError>()("JobQueueError", {
  message: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {}

/** A recurring schedule has a cron expression or time zone that cannot be parsed, a payload its schema refuses, or a duplicate name. */
export class InvalidSchedule extends Schema.TaggedError<InvalidSchedule>()("InvalidSchedule", {
  name: Schema.String,
  cron: Schema.String,
  timeZone: Schema.String,
  message: Schema.String
}) {}
