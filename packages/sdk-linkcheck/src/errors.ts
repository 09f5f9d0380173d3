import { Duration, Schema } from "effect"

/**
 * The service could not be reached (`Transport`), or it answered with something the link checking contract does not
 * allow (`UnexpectedResponse`: an unknown status such as 500, or a body of the wrong shape).
 */
export class LinkcheckClientError extends Schema.TaggedError<LinkcheckClientError>()("LinkcheckClientError", {
  reason: Schema.Literal("Transport", "UnexpectedResponse"),
  message: Schema.String,
  status: Schema.optional(Schema.Int),
  cause: Schema.optional(Schema.Defect)
}) {}

/** `waitForBatch` gave up: the batch was still in progress when the timeout ran out. */
export class WaitTimeout extends Schema.TaggedError<WaitTimeout>()("WaitTimeout", {
  batchId: Schema.Number,
  timeout: Schema.DurationFromSelf
}) {
  override get message(): string {
    return `Batch ${this.batchId} did not complete within ${Duration.format(this.timeout)}`
  }
}

/** A webhook body that is not a BatchReport (not UTF-8, not JSON, or not the report's shape). */
export class InvalidWebhookBody extends Schema.TaggedError<InvalidWebhookBody>()("InvalidWebhookBody", {
  message: Schema.String
}) {}
