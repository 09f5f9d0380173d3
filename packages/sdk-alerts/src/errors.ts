import {
  ContentChangeAlreadyReceivedResponse,
  ForbiddenResponse,
  InvalidRequestResponse,
  SubscriberListNotFoundResponse,
  SubscriberNotFoundResponse,
  SubscriptionNotFoundResponse,
  TooManyAuthTokensResponse,
  UnauthenticatedResponse,
  UnprocessableEntityResponse
} from "@civicstack/core-alerts/api"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { Schema } from "effect"

/**
 * The service could not be reached (`Transport`), or it answered with something the email alert contract does not
 * allow (`UnexpectedResponse`: an undeclared status such as 500, or a body of the wrong shape). Never a refusal of
 * the service: those are the contract's own errors.
 */
export class AlertsClientError extends Schema.TaggedError<AlertsClientError>()("AlertsClientError", {
  reason: Schema.Literal("Transport", "UnexpectedResponse"),
  message: Schema.String,
  status: Schema.optional(Schema.Int),
  cause: Schema.optional(Schema.Defect)
}) {}

/** The `{"error", "details"}` envelope of a refusal. */
export interface ErrorEnvelope {
  readonly error: string
  readonly details?: Readonly<Record<string, unknown>> | undefined
}

/**
 * A refusal of the email alert service, as the Promise client rejects with it: the HTTP status the contract gives
 * this refusal and the envelope. A bad argument is refused before anything is sent, with the status the service
 * would have answered. `cause` is the Effect client's tagged error.
 */
export abstract class AlertsApiError extends Error {
  /** The error of the Effect client this refusal stands for. */
  abstract readonly tag: string
  readonly status: number
  readonly error: string
  readonly details: Readonly<Record<string, unknown>> | undefined

  constructor(status: number, envelope: ErrorEnvelope, options?: ErrorOptions) {
    super(envelope.error, options)
    this.status = status
    this.error = envelope.error
    this.details = envelope.details
  }

  /** The envelope as the service sends it. */
  toJSON(): ErrorEnvelope {
    return this.details === undefined ? { error: this.error } : { error: this.error, details: this.details }
  }
}

const statusOf = (response: Schema.Schema.All) => HttpApiSchema.getStatusError(response)

/** 400: a required field is missing, or the request could not be read. */
export class InvalidRequestError extends AlertsApiError {
  static readonly status = statusOf(InvalidRequestResponse)
  override readonly name = "InvalidRequestError"
  readonly tag = "InvalidRequest"
  constructor(envelope: ErrorEnvelope, options?: ErrorOptions) {
    super(InvalidRequestError.status, envelope, options)
  }
}

/** 422: a value is refused; `details` names the fields. */
export class UnprocessableEntityError extends AlertsApiError {
  static readonly status = statusOf(UnprocessableEntityResponse)
  override readonly name = "UnprocessableEntityError"
  readonly tag = "UnprocessableEntity"
  constructor(envelope: ErrorEnvelope, options?: ErrorOptions) {
    super(UnprocessableEntityError.status, envelope, options)
  }
}

/** 401: no bearer token, or one the service does not accept. */
export class UnauthenticatedError extends AlertsApiError {
  static readonly status = statusOf(UnauthenticatedResponse)
  override readonly name = "UnauthenticatedError"
  readonly tag = "Unauthenticated"
  constructor(envelope: ErrorEnvelope, options?: ErrorOptions) {
    super(UnauthenticatedError.status, envelope, options)
  }
}

/** 403: the token's user may not use the email alert API. */
export class ForbiddenError extends AlertsApiError {
  static readonly status = statusOf(ForbiddenResponse)
  override readonly name = "ForbiddenError"
  readonly tag = "Forbidden"
  constructor(envelope: ErrorEnvelope, options?: ErrorOptions) {
    super(ForbiddenError.status, envelope, options)
  }
}

/** 404: no subscriber list with these criteria or this slug, or no list of this id to subscribe to. */
export class SubscriberListNotFoundError extends AlertsApiError {
  static readonly status = statusOf(SubscriberListNotFoundResponse)
  override readonly name = "SubscriberListNotFoundError"
  readonly tag = "SubscriberListNotFound"
  constructor(envelope: ErrorEnvelope, options?: ErrorOptions) {
    super(SubscriberListNotFoundError.status, envelope, options)
  }
}

/** 404: no subscriber of this id or address (or one already deactivated, for `deactivateSubscriber`). */
export class SubscriberNotFoundError extends AlertsApiError {
  static readonly status = statusOf(SubscriberNotFoundResponse)
  override readonly name = "SubscriberNotFoundError"
  readonly tag = "SubscriberNotFound"
  constructor(envelope: ErrorEnvelope, options?: ErrorOptions) {
    super(SubscriberNotFoundError.status, envelope, options)
  }
}

/** 404: no subscription of this id (or one already ended, for `changeFrequency` and `unsubscribe`). */
export class SubscriptionNotFoundError extends AlertsApiError {
  static readonly status = statusOf(SubscriptionNotFoundResponse)
  override readonly name = "SubscriptionNotFoundError"
  readonly tag = "SubscriptionNotFound"
  constructor(envelope: ErrorEnvelope, options?: ErrorOptions) {
    super(SubscriptionNotFoundError.status, envelope, options)
  }
}

/** 409: a notification with the same content_id, base_path and public_updated_at was received before. */
export class ContentChangeAlreadyReceivedError extends AlertsApiError {
  static readonly status = statusOf(ContentChangeAlreadyReceivedResponse)
  override readonly name = "ContentChangeAlreadyReceivedError"
  readonly tag = "ContentChangeAlreadyReceived"
  constructor(envelope: ErrorEnvelope, options?: ErrorOptions) {
    super(ContentChangeAlreadyReceivedError.status, envelope, options)
  }
}

/** 429: the address was sent as many auth-token emails as it may be within the hour; nothing was sent. */
export class TooManyAuthTokensError extends AlertsApiError {
  static readonly status = statusOf(TooManyAuthTokensResponse)
  override readonly name = "TooManyAuthTokensError"
  readonly tag = "TooManyAuthTokens"
  constructor(envelope: ErrorEnvelope, options?: ErrorOptions) {
    super(TooManyAuthTokensError.status, envelope, options)
  }
}

type RefusalClass = new(envelope: ErrorEnvelope, options?: ErrorOptions) => AlertsApiError

const refusalClasses: Readonly<Record<string, RefusalClass>> = {
  InvalidRequest: InvalidRequestError,
  UnprocessableEntity: UnprocessableEntityError,
  Unauthenticated: UnauthenticatedError,
  Forbidden: ForbiddenError,
  SubscriberListNotFound: SubscriberListNotFoundError,
  SubscriberNotFound: SubscriberNotFoundError,
  SubscriptionNotFound: SubscriptionNotFoundError,
  ContentChangeAlreadyReceived: ContentChangeAlreadyReceivedError,
  TooManyAuthTokens: TooManyAuthTokensError
}

const isEnvelope = (value: unknown): value is ErrorEnvelope & { readonly _tag: string } =>
  typeof value === "object" && value !== null && "_tag" in value && typeof value._tag === "string" &&
  "error" in value && typeof value.error === "string"

/** The Promise client's error for a failure of the Effect client: a refusal gets its class, anything else stays. */
export const promiseErrorOf = (failure: unknown): unknown => {
  if (!isEnvelope(failure) || !Object.hasOwn(refusalClasses, failure._tag)) return failure
  const RefusalClass = refusalClasses[failure._tag]!
  const details = "details" in failure ? failure.details as ErrorEnvelope["details"] : undefined
  return new RefusalClass(details === undefined ? { error: failure.error } : { error: failure.error, details }, {
    cause: failure
  })
}
