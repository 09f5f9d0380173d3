import { errorAnswer } from "@civicstack/kit/access"
import { ParseResult, Schema } from "effect"

const Details = Schema.Record({ key: Schema.String, value: Schema.Unknown })
const EnvelopeFields = { error: Schema.String, details: Schema.optional(Details) }

/** 400: the request lacks something it needs (a required field, a body that is JSON). Nothing was changed. */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", EnvelopeFields) {}

/**
 * 422: the request is well formed but a value is refused (a criterion of the wrong shape, an address that is not
 * one, an unknown frequency); `details` names the fields. Nothing was changed.
 */
export class UnprocessableEntity extends Schema.TaggedError<UnprocessableEntity>()("UnprocessableEntity", EnvelopeFields) {}

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

/** 429: this address was sent as many auth-token emails as it may be within the hour; nothing was sent. */
export class TooManyAuthTokens extends Schema.TaggedError<TooManyAuthTokens>()("TooManyAuthTokens", {
  error: Schema.String,
  /** Seconds until another may be sent, as the answer's `Retry-After` header says; not in the body. */
  retryAfterSeconds: Schema.optional(Schema.Number)
}) {}

/** 404: no bearer token is set for Notify's status callbacks, so the endpoint is off (as if it did not exist). */
export class StatusUpdatesOff extends Schema.TaggedError<StatusUpdatesOff>()("StatusUpdatesOff", {
  error: Schema.Literal("Not Found")
}) {}

/** 401: the status callback's bearer token is missing or wrong. */
export class StatusUpdateRefused extends Schema.TaggedError<StatusUpdateRefused>()("StatusUpdateRefused", {
  error: Schema.Literal("The bearer token is missing or wrong")
}) {}

/** A refusal whose body is always the one `message`. */
const withMessage = <const Message extends string, Self>(message: Message, errorClass: Schema.Schema<Self, any>, status: number) =>
  errorAnswer(errorClass, { error: Schema.Literal(message) }, status)

export const InvalidRequestResponse = errorAnswer(InvalidRequest, EnvelopeFields, 400)
export const UnprocessableEntityResponse = errorAnswer(UnprocessableEntity, EnvelopeFields, 422)
export const SubscriberListNotFoundResponse = withMessage(
  "Could not find the subscriber list",
  SubscriberListNotFound,
  404
)
export const StatusUpdatesOffResponse = withMessage("Not Found", StatusUpdatesOff, 404)
export const StatusUpdateRefusedResponse = withMessage("The bearer token is missing or wrong", StatusUpdateRefused, 401)
export const SubscriberNotFoundResponse = withMessage("Could not find the subscriber", SubscriberNotFound, 404)
export const TooManyAuthTokensResponse = errorAnswer(TooManyAuthTokens, { error: Schema.String }, 429)
export const SubscriptionNotFoundResponse = withMessage("Could not find the subscription", SubscriptionNotFound, 404)
export const ContentChangeAlreadyReceivedResponse = withMessage(
  "Content change already received",
  ContentChangeAlreadyReceived,
  409
)

/**
 * The refusal of a request whose parameters or body did not decode: 400 (`InvalidRequest`) when a required field is
 * missing, 422 (`UnprocessableEntity`) when a value is refused. `details` names each field (a dotted path, such as
 * `tags.format`; `body` for the whole) with what is wrong with it, and `error` says the same in one line.
 */
export const refusalOf = (error: ParseResult.ParseError): InvalidRequest | UnprocessableEntity => {
  const issues = ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => ({
    tag: issue._tag,
    field: issue.path.length === 0 ? "body" : issue.path.map(String).join("."),
    message: issue.message
  }))
  // a field that may be null also fails as "not null" beside its real problem inside it: keep the innermost
  const innermost = issues.filter(({ field }) => !issues.some((other) => other.field.startsWith(`${field}.`)))
  const byField = new Map<string, Array<string>>()
  for (const { field, message } of innermost) {
    const messages = byField.get(field) ?? []
    if (!messages.includes(message)) messages.push(message)
    byField.set(field, messages)
  }
  const details = Object.fromEntries(byField)
  const summary = [...byField].map(([field, messages]) => `${field}: ${messages.join("; ")}`).join(", ")
  return innermost.some(({ tag }) => tag === "Missing")
    ? new InvalidRequest({ error: summary, details })
    : new UnprocessableEntity({ error: summary, details })
}
