import { Schema } from "effect"

/** What every system under test carries: the job's number and when the producer enqueued it (epoch ms). */
export const JobPayload = Schema.Struct({
  n: Schema.Number,
  enqueuedAt: Schema.Number
})
export type JobPayload = typeof JobPayload.Type

export const decodeJobPayload = Schema.decodeUnknownSync(JobPayload)
