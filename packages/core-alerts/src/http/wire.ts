import type { CreateNotificationBody } from "../api/requests"
import type { Criteria } from "../api/criteria"
import { keyedRecord } from "../api/criteria"
import * as Api from "../api/records"
import { criteriaToWire, normaliseListCriteria } from "../domain/criteria"
import type { ListCriteria } from "../domain/criteria"
import type { NewNotification, Subscriber, SubscriberList, Subscription } from "../domain/records"

/** The criteria fields of `POST /subscriber-lists` and of the `GET /subscriber-lists` query. */
export interface CriteriaFields {
  readonly tags?: Criteria | null | undefined
  readonly links?: Criteria | null | undefined
  readonly document_type?: string | null | undefined
  readonly email_document_supertype?: string | null | undefined
  readonly government_document_supertype?: string | null | undefined
  readonly content_id?: string | null | undefined
}

export const listCriteriaFromWire = (fields: CriteriaFields): ListCriteria =>
  normaliseListCriteria({
    tags: fields.tags,
    links: fields.links,
    documentType: fields.document_type,
    emailDocumentSupertype: fields.email_document_supertype,
    governmentDocumentSupertype: fields.government_document_supertype,
    contentId: fields.content_id
  })

/** The public page where a person subscribes to the list. */
export const subscriptionUrl = (publicSiteUrl: string, slug: string) =>
  `${publicSiteUrl.replace(/\/+$/, "")}/email/subscriptions/new?topic_id=${encodeURIComponent(slug)}`

export const subscriberListToWire = (list: SubscriberList, publicSiteUrl: string): Api.SubscriberList =>
  new Api.SubscriberList({
    id: list.id,
    title: list.title,
    slug: list.slug,
    subscription_url: subscriptionUrl(publicSiteUrl, list.slug),
    external_delivery_id: list.slug,
    document_type: list.criteria.documentType,
    email_document_supertype: list.criteria.emailDocumentSupertype,
    government_document_supertype: list.criteria.governmentDocumentSupertype,
    tags: criteriaToWire(list.criteria.tags),
    links: criteriaToWire(list.criteria.links),
    content_id: list.criteria.contentId,
    created_at: list.createdAt,
    updated_at: list.updatedAt
  })

export const subscriberToWire = (subscriber: Subscriber): Api.Subscriber =>
  new Api.Subscriber({
    id: subscriber.id,
    address: subscriber.address,
    created_at: subscriber.createdAt,
    updated_at: subscriber.updatedAt,
    sso_user_uid: subscriber.ssoUserUid,
    deactivated_at: subscriber.deactivatedAt
  })

const subscriptionFields = (subscription: Subscription) => ({
  id: subscription.id,
  subscriber_id: subscription.subscriberId,
  subscriber_list_id: subscription.subscriberListId,
  frequency: subscription.frequency,
  source: subscription.source,
  ended_at: subscription.endedAt,
  ended_reason: subscription.endedReason,
  sso_user_uid: subscription.ssoUserUid,
  created_at: subscription.createdAt,
  updated_at: subscription.updatedAt
})

export const subscriptionToWire = (subscription: Subscription): Api.Subscription =>
  new Api.Subscription(subscriptionFields(subscription))

export const subscriptionWithListToWire = (
  subscription: Subscription,
  list: SubscriberList,
  publicSiteUrl: string
): Api.SubscriptionWithList =>
  new Api.SubscriptionWithList({
    ...subscriptionFields(subscription),
    subscriber_list: subscriberListToWire(list, publicSiteUrl)
  })

export const subscriptionDetailsToWire = (
  details: { readonly subscription: Subscription; readonly list: SubscriberList; readonly subscriber: Subscriber },
  publicSiteUrl: string
): Api.SubscriptionDetails =>
  new Api.SubscriptionDetails({
    ...subscriptionFields(details.subscription),
    subscriber_list: subscriberListToWire(details.list, publicSiteUrl),
    subscriber: subscriberToWire(details.subscriber)
  })

const factsMap = (facts: CreateNotificationBody["tags"]) =>
  new Map(Object.entries(facts ?? keyedRecord<ReadonlyArray<string>>([])))

/** A notification as received (`POST /notifications`, `POST /content-changes`); absent fields are `null`. */
export const notificationFromWire = (body: CreateNotificationBody): NewNotification => ({
  subject: body.subject ?? null,
  body: body.body ?? null,
  title: body.title ?? null,
  description: body.description ?? null,
  changeNote: body.change_note ?? null,
  tags: factsMap(body.tags),
  links: factsMap(body.links),
  documentType: body.document_type ?? null,
  emailDocumentSupertype: body.email_document_supertype ?? null,
  governmentDocumentSupertype: body.government_document_supertype ?? null,
  contentId: body.content_id ?? null,
  basePath: body.base_path ?? null,
  publicUpdatedAt: body.public_updated_at ?? null,
  publishingApp: body.publishing_app ?? null,
  fromAddressId: body.from_address_id ?? null,
  urgent: body.urgent ?? false,
  priority: body.priority ?? "normal",
  header: body.header ?? null,
  footer: body.footer ?? null,
  footnote: body.footnote ?? null
})
