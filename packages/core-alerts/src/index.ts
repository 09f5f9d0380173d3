export { alertsConfig } from "./config"
export type { AlertsConfig } from "./config"
export { StoreError } from "@civicstack/kit"
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
export { newNotification } from "./domain/records"
export { renderEmail } from "./domain/render"
export type { RenderedEmail } from "./domain/render"
export { slugify } from "./domain/slug"
export { alertsHandlers } from "./http/handlers"
export {
  listCriteriaFromWire,
  notificationFromWire,
  subscriberListToWire,
  subscriberToWire,
  subscriptionDetailsToWire,
  subscriptionToWire,
  subscriptionUrl,
  subscriptionWithListToWire
} from "./http/wire"
export type { CriteriaFields } from "./http/wire"
export { layerMemory, layerOpenAccess, layerSql, workers } from "./layers"
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
export { EmailProvider, PermanentDeliveryFailure, TemporaryDeliveryFailure } from "./services/EmailProvider"
export type { DeliveryFailure, OutgoingEmail } from "./services/EmailProvider"
export {
  DEFAULT_EMAIL_FROM,
  DEFAULT_EMAIL_RATE_LIMIT,
  emailProviderConfig,
  emailProviderLayer,
  EmailProviderSettings
} from "./services/emailProviders/config"
export type { BounceSettings, EmailSettings, OutboxMessage } from "./services/emailProviders/config"
export { defaultAlertsSettings, defaultDeliverySettings } from "./settings"
export type { AlertsSettings, DeliverySettings, HealthThresholds, Thresholds } from "./settings"
export { AddressTaken, DuplicateContentChange } from "./storage/AlertsStore"
export { bounceListenerLayer } from "./workers/bounceListener"
export type { BounceListenerSettings } from "./workers/bounceListener"
export type { DeliveryReport, DeliveryReportOutcome, DeliveryStatus, StoredDeliveryReport } from "./domain/deliveryStatus"
