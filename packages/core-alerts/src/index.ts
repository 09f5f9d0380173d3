export { alertsConfig } from "./config"
export type { AlertsConfig } from "./config"
export { EmailProvider, PermanentDeliveryFailure, TemporaryDeliveryFailure } from "./delivery/EmailProvider"
export type { DeliveryFailure, OutgoingEmail } from "./delivery/EmailProvider"
export {
  DEFAULT_EMAIL_FROM,
  DEFAULT_EMAIL_RATE_LIMIT,
  emailProviderConfig,
  emailProviderLayer,
  EmailProviderSettings
} from "./delivery/providers/index"
export type { EmailSettings } from "./delivery/providers/index"
export { renderEmail } from "./delivery/render"
export type { RenderedEmail } from "./delivery/render"
export { defaultDeliverySettings } from "./delivery/settings"
export type { DeliverySettings } from "./delivery/settings"
export { addressKey, InvalidAddress, normaliseAddress } from "./domain/address"
export type { EmailAddress } from "./domain/address"
export { criteriaDigest, hasCriteria, normaliseListCriteria } from "./domain/criteria"
export type { CriteriaMap, Criterion, ListCriteria, ListCriteriaInput, Match } from "./domain/criteria"
export { listMatches } from "./domain/matching"
export type { NotificationFacts } from "./domain/matching"
export type {
  EndedReason,
  Frequency,
  NewNotification,
  Notification,
  Subscriber,
  SubscriberList,
  Subscription,
  SubscriptionSource
} from "./domain/records"
export { slugify } from "./domain/slug"
export { alertsHandlers } from "./http/handlers"
export { layerOpenAccess } from "./http/openAccess"
export { layerMemory, layerSql, workers } from "./layers"
export { migrate } from "./migrations/index"
export { Alerts } from "./services/Alerts"
export type {
  AuthTokenRequest,
  FoundOrCreated,
  Health,
  ListRequest,
  SubscribeRequest,
  SubscriberSubscriptions,
  Workload
} from "./services/Alerts"
export {
  AlertsOperations,
  sendTestEmail,
  TEST_EMAIL_SUBJECT,
  testEmail
} from "./services/AlertsOperations"
export type {
  JobFigures,
  ListSubscriber,
  ListSubscribers,
  ListWithCounts,
  QueuedTestEmail,
  QueueReport,
  SentTestEmail
} from "./services/AlertsOperations"
export type { AlertsParts } from "./services/AlertsParts"
export { defaultAlertsSettings } from "./settings"
export type { AlertsSettings, HealthThresholds, Thresholds } from "./settings"
export { AddressTaken, DuplicateContentChange, StoreError } from "./storage/AlertsStore"
export {
  listCriteriaFromWire,
  notificationFromWire,
  subscriberListToWire,
  subscriberToWire,
  subscriptionDetailsToWire,
  subscriptionToWire,
  subscriptionUrl,
  subscriptionWithListToWire
} from "./wire"
export type { CriteriaFields } from "./wire"
