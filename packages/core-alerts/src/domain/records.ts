import type { EndedReason, Frequency, SubscriptionSource } from "../api/records"
import type { EmailAddress } from "./address"
import type { ListCriteria } from "./criteria"

export type { EndedReason, Frequency, SubscriptionSource }

export interface SubscriberList {
  readonly id: number
  readonly title: string
  /** Unique; from the title, with `-2`, `-3`... when another list had it first. */
  readonly slug: string
  readonly criteria: ListCriteria
  /** `criteriaDigest(criteria)`: unique, so one list per meaning of its criteria. */
  readonly criteriaDigest: string
  readonly createdAt: Date
  readonly updatedAt: Date
}

export interface Subscriber {
  readonly id: number
  /** Unique case-insensitively. */
  readonly address: EmailAddress
  readonly ssoUserUid: string | null
  readonly deactivatedAt: Date | null
  readonly createdAt: Date
  readonly updatedAt: Date
}

/** A subscriber's subscription to a list. At most one per subscriber and list is active (`endedAt` null). */
export interface Subscription {
  readonly id: string
  readonly subscriberId: number
  readonly subscriberListId: number
  readonly frequency: Frequency
  readonly source: SubscriptionSource
  readonly endedAt: Date | null
  readonly endedReason: EndedReason | null
  readonly ssoUserUid: string | null
  readonly createdAt: Date
  readonly updatedAt: Date
}

/** A content change to tell subscribers about, as received. */
export interface NewNotification {
  readonly subject: string | null
  readonly body: string | null
  readonly title: string | null
  readonly description: string | null
  readonly changeNote: string | null
  readonly tags: ReadonlyMap<string, ReadonlyArray<string>>
  readonly links: ReadonlyMap<string, ReadonlyArray<string>>
  readonly documentType: string | null
  readonly emailDocumentSupertype: string | null
  readonly governmentDocumentSupertype: string | null
  readonly contentId: string | null
  readonly basePath: string | null
  readonly publicUpdatedAt: Date | null
  readonly publishingApp: string | null
  readonly fromAddressId: string | null
  readonly urgent: boolean
  readonly priority: "normal" | "high"
  readonly header: string | null
  readonly footer: string | null
  readonly footnote: string | null
}

/** A notification of `subject`, `body` and `tags` alone, every other field empty unless `fields` gives it. */
export const newNotification = (
  fields: Pick<NewNotification, "subject" | "body" | "tags"> & Partial<NewNotification>
): NewNotification => ({
  title: null,
  description: null,
  changeNote: null,
  links: new Map(),
  documentType: null,
  emailDocumentSupertype: null,
  governmentDocumentSupertype: null,
  contentId: null,
  basePath: null,
  publicUpdatedAt: null,
  publishingApp: null,
  fromAddressId: null,
  urgent: false,
  priority: "normal",
  header: null,
  footer: null,
  footnote: null,
  ...fields
})

export interface Notification extends NewNotification {
  readonly id: string
  readonly createdAt: Date
}
