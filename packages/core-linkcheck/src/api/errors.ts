import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { Schema } from "effect"

const Details = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** A request the service cannot act on: a missing or malformed parameter or body. Nothing was changed. */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", {
  error: Schema.String,
  details: Schema.optional(Details)
}) {}

export class BatchNotFound extends Schema.TaggedError<BatchNotFound>()("BatchNotFound", {
  error: Schema.Literal("Not Found")
}) {}

/**
 * On the wire an error is the envelope `{"error": ..., "details": ...}`; the tag lives on the TypeScript side only,
 * so clients decode a typed error from the status code and the envelope.
 */
export const InvalidRequestResponse = Schema.transform(
  Schema.Struct({ error: Schema.String, details: Schema.optional(Details) }),
  Schema.typeSchema(InvalidRequest),
  {
    strict: true,
    decode: (body) => new InvalidRequest(body),
    encode: ({ details, error }) => (details === undefined ? { error } : { error, details })
  }
).annotations(HttpApiSchema.annotations({ status: 400 }))

export const BatchNotFoundResponse = Schema.transform(
  Schema.Struct({ error: Schema.Literal("Not Found") }),
  Schema.typeSchema(BatchNotFound),
  {
    strict: true,
    decode: (body) => new BatchNotFound(body),
    encode: ({ error }) => ({ error })
  }
).annotations(HttpApiSchema.annotations({ status: 404 }))
