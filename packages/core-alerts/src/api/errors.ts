import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { Schema } from "effect"

const Details = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** 400: the request lacks something it needs (a required field, a body that is JSON). Nothing was changed. */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", {
  error: Schema.String,
  details: Schema.optional(Details)
}) {}

/**
 * 422: the request is well formed but a value is refused (a criterion of the wrong shape, an address that is not
 * one, an unknown frequency); `details` names the fields. Nothing was changed.
 */
export class UnprocessableEntity extends Schema.TaggedError<UnprocessableEntity>()("UnprocessableEntity", {
  error: Schema.String,
  details: Schema.optional(Details)
}) {}

export class SubscriberListNotFound extends Schema.TaggedError<SubscriberListNotFound>()("SubscriberListNotFound", {
  error: Schema.Literal("Could not find the subscriber list")
}) {}

export class SubscriberNotFound extends Schema.TaggedError<SubscriberNotFound>()("SubscriberNotFound", {
  error: Schema.Literal("Could not find the subscriber")
}) {}

export class SubscriptionNotFound extends Schema.TaggedError<SubscriptionNotFound>()("SubscriptionNotFound", {
  error: Schema.Literal("Could not find the subscription")
}) {}

/** 409: a notification with the same content_id, base_path and public_updated_at was received before. */
export class ContentChangeAlreadyReceived
  extends Schema.TaggedError<ContentChangeAlreadyReceived>()("ContentChangeAlreadyReceived", {
    error: Schema.Literal("Content change already received")
  })
{}

const Envelope = Schema.Struct({ error: Schema.String, details: Schema.optional(Details) })

/**
 * On the wire an error is the envelope `{"error": ..., "details": ...}`; the tag lives on the TypeScript side only,
 * so clients decode a typed error from the status code and the envelope.
 */
const withDetails = <Self extends { readonly error: string; readonly details?: typeof Details.Type | undefined }>(
  errorClass: Schema.Schema<Self, any> & (new(fields: typeof Envelope.Type) => Self),
  status: number
) =>
  Schema.transform(Envelope, Schema.typeSchema(errorClass), {
    strict: true,
    decode: (body) => new errorClass(body),
    encode: ({ details, error }) => (details === undefined ? { error } : { error, details })
  }).annotations(HttpApiSchema.annotations({ status }))

const withMessage = <const Message extends string, Self extends { readonly error: Message }>(
  message: Message,
  errorClass: Schema.Schema<Self, any> & (new(fields: { readonly error: Message }) => Self),
  status: number
) =>
  Schema.transform(Schema.Struct({ error: Schema.Literal(message) }), Schema.typeSchema(errorClass), {
    strict: true,
    decode: (body) => new errorClass(body),
    encode: ({ error }) => ({ error })
  }).annotations(HttpApiSchema.annotations({ status }))

export const InvalidRequestResponse = withDetails(InvalidRequest, 400)
export const UnprocessableEntityResponse = withDetails(UnprocessableEntity, 422)
export const SubscriberListNotFoundResponse = withMessage(
  "Could not find the subscriber list",
  SubscriberListNotFound,
  404
)
export const SubscriberNotFoundResponse = withMessage("Could not find the subscriber", SubscriberNotFound, 404)
export const SubscriptionNotFoundResponse = withMessage("Could not find the subscription", SubscriptionNotFound, 404)
export const ContentChangeAlreadyReceivedResponse = withMessage(
  "Content change already received",
  ContentChangeAlreadyReceived,
  409
)
