import type { DeliverySettings } from "../settings"
import { escapeLinkText } from "./bodyParts"
import { siteLink, unsubscribeUrlPrefix } from "./links"
import type { Notification } from "./records"

/** What every immediate email of one notification says: stored once per notification, not in each email. */
export interface SharedEmailContent {
  readonly subject: string
  readonly bodyBefore: string
  readonly bodyAfter: string
}

/**
 * What one notification's immediate email says. Each subscriber's body is `bodyBefore`, then one `unsubscribeLine`
 * per matching subscription (by list title), then `bodyAfter` (see `immediateEmailBody`).
 */
export interface ImmediateEmailContent extends SharedEmailContent {
  /** The subscription's id is appended to make its unsubscribe link. */
  readonly unsubscribeUrlPrefix: string
}

/** A subscriber's immediate email: the notification's shared content around the subscriber's unsubscribe lines. */
export const immediateEmailBody = (
  content: Pick<SharedEmailContent, "bodyBefore" | "bodyAfter">,
  unsubscribeLines: string
) =>
  `${content.bodyBefore}${unsubscribeLines}${content.bodyAfter}`

const paragraphs = (...parts: ReadonlyArray<string | null>) =>
  parts.filter((part): part is string => part !== null && part.trim() !== "").join("\n\n")

/** The subject of a notification's emails: its own, or its title, on one line whatever the provider does with breaks. */
export const notificationSubject = (notification: Notification) =>
  (notification.subject ?? notification.title ?? "Content update").replace(/[\r\n\u2028\u2029]+/g, " ")

/**
 * The Markdown of a notification: its `body` when it gave one; otherwise its title (linked to the page at
 * `base_path` when there is one), description and change note, each shown as written (see `escapeLinkText`).
 */
export const notificationMarkdown = (notification: Notification, settings: Pick<DeliverySettings, "publicSiteUrl">) => {
  if (notification.body !== null) return notification.body
  const title = notification.title ?? notification.subject ?? ""
  const heading = notification.basePath === null
    ? escapeLinkText(title)
    : `[${escapeLinkText(title)}](${siteLink(settings, notification.basePath)})`
  return paragraphs(
    heading,
    notification.description === null ? null : escapeLinkText(notification.description),
    notification.changeNote === null ? null : `Change made: ${escapeLinkText(notification.changeNote)}`
  )
}

/** An immediate email about `notification`: the store puts each subscriber's unsubscribe links in between. */
export const immediateEmailContent = (
  notification: Notification,
  settings: Pick<DeliverySettings, "publicSiteUrl" | "footer">
): ImmediateEmailContent => ({
  subject: notificationSubject(notification),
  bodyBefore: paragraphs(
    notification.header,
    notificationMarkdown(notification, settings),
    notification.footnote,
    "---",
    "You asked for an email as soon as something changes on these topics. To stop:"
  ) + "\n\n",
  bodyAfter: "\n\n" + paragraphs(notification.footer, settings.footer),
  unsubscribeUrlPrefix: unsubscribeUrlPrefix(settings)
})
