export {
  AlertsApi,
  ContentChangeAlreadyReceived,
  Criteria,
  CriterionValue,
  EndedReason,
  Forbidden,
  Frequency,
  HealthStatus,
  InvalidRequest,
  Subscriber,
  SubscriberList,
  SubscriberListNotFound,
  SubscriberNotFound,
  Subscription,
  SubscriptionDetails,
  SubscriptionNotFound,
  SubscriptionSource,
  SubscriptionWithList,
  TooManyAuthTokens,
  Unauthenticated,
  UnprocessableEntity
} from "@civicstack/core-alerts/api"
export type { KeyedRecord } from "@civicstack/core-alerts/api"
export {
  type AccessRefused,
  AlertsClient,
  type AlertsClientOptions,
  type AlertsClientService,
  type FoundOrCreatedList,
  type Healthcheck,
  type ListCriteria,
  makeAlertsClient,
  type NewSubscriberList,
  type NewSubscription,
  type Notification,
  type Refused,
  type AuthTokenRequest,
  type SubscriptionConfirmationRequest,
  type CallFailure,
  type SubscriberSubscriptions,
  type SubscriptionResult
} from "./AlertsClient"
export { allOf, anyOf, criteria } from "./criteria"
export {
  AlertsApiError,
  AlertsClientError,
  ContentChangeAlreadyReceivedError,
  type ErrorEnvelope,
  ForbiddenError,
  InvalidRequestError,
  SubscriberListNotFoundError,
  SubscriberNotFoundError,
  TooManyAuthTokensError,
  SubscriptionNotFoundError,
  UnauthenticatedError,
  UnprocessableEntityError
} from "./errors"
export { type AlertsPromiseClient, createAlertsClient, type CreateAlertsClientOptions } from "./promiseClient"
