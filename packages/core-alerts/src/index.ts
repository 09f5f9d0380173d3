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
export { migrate } from "./migrations/index"
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
