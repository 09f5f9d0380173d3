import { errorAnswer } from "@civicstack/kit/access"
import { Schema } from "effect"

const Details = Schema.Record({ key: Schema.String, value: Schema.Unknown })

const InvalidRequestFields = { error: Schema.String, details: Schema.optional(Details) }

/** A request the service cannot act on: a missing or malformed parameter or body. Nothing was changed. */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", InvalidRequestFields) {}

const BatchNotFoundFields = { error: Schema.Literal("Not Found") }
export class BatchNotFound extends Schema.TaggedError<BatchNotFound>()("BatchNotFound", BatchNotFoundFields) {}

export const InvalidRequestResponse = errorAnswer(InvalidRequest, InvalidRequestFields, 400)
export const BatchNotFoundResponse = errorAnswer(BatchNotFound, BatchNotFoundFields, 404)
