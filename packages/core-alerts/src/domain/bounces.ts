import type { DeliveryStatus } from "./deliveryStatus"
import { isUuid } from "./ids"

const splitAddress = (address: string) => {
  const at = address.lastIndexOf("@")
  return at <= 0 ? undefined : { local: address.slice(0, at), domain: address.slice(at + 1) }
}

/**
 * The envelope sender of an email (VERP): `bounces@example.org` and the email's id give
 * `bounces+<id>@example.org`, so a bounce says which email it is about by the address it comes back to.
 */
export const verpAddress = (bounceAddress: string, emailId: string): string => {
  const parts = splitAddress(bounceAddress)
  return parts === undefined ? bounceAddress : `${parts.local}+${emailId}@${parts.domain}`
}

/** The email id in a VERP address of `bounceAddress`; undefined for any other address. */
export const emailIdOfVerpAddress = (bounceAddress: string, recipient: string): string | undefined => {
  const ours = splitAddress(bounceAddress)
  const theirs = splitAddress(recipient)
  if (ours === undefined || theirs === undefined || theirs.domain.toLowerCase() !== ours.domain.toLowerCase()) return undefined
  const prefix = `${ours.local}+`.toLowerCase()
  if (!theirs.local.toLowerCase().startsWith(prefix)) return undefined
  const id = theirs.local.slice(prefix.length)
  return isUuid(id) ? id.toLowerCase() : undefined
}

/** One recipient's part of a delivery status notification (RFC 3464, section 2.3). */
export interface RecipientStatus {
  /** Original-Recipient when given, else Final-Recipient: the address as it was sent to. */
  readonly address: string
  readonly action: string
  /** `5.1.1` and the like. */
  readonly status: string
  readonly diagnostic: string | null
}

/** `Name: value` fields, with folded lines unfolded, in groups separated by blank lines. */
const fieldGroups = (text: string): ReadonlyArray<ReadonlyMap<string, string>> =>
  text.replace(/\r\n/g, "\n").replace(/\n[ \t]+/g, " ").split(/\n\s*\n/).map((group) =>
    new Map(group.split("\n").flatMap((line) => {
      const colon = line.indexOf(":")
      return colon <= 0 ? [] : [[line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()] as const]
    }))
  )

/** `rfc822; ann@example.org` to `ann@example.org`; other address types are not email addresses. */
const rfc822Address = (field: string | undefined) => {
  const match = field === undefined ? null : /^rfc822\s*;\s*<?([^<>\s]+@[^<>\s]+?)>?$/i.exec(field)
  return match === null ? undefined : match[1]
}

/** The recipients a `message/delivery-status` body reports on (the per-message group is skipped). */
export const readDeliveryStatus = (text: string): ReadonlyArray<RecipientStatus> =>
  fieldGroups(text).flatMap((fields) => {
    const address = rfc822Address(fields.get("original-recipient")) ?? rfc822Address(fields.get("final-recipient"))
    const action = fields.get("action")?.toLowerCase()
    const status = /^\d\.\d{1,3}\.\d{1,3}/.exec(fields.get("status") ?? "")?.[0]
    if (address === undefined || action === undefined || status === undefined) return []
    return [{ address, action, status, diagnostic: fields.get("diagnostic-code") ?? null }]
  })

/**
 * What a recipient's status says of the address: a failure with a 5.x.x status is for good, any other failure or a
 * delay is temporary; `delivered`, `relayed` and `expanded` went through.
 */
export const deliveryStatusOf = (recipient: RecipientStatus): DeliveryStatus =>
  recipient.action === "failed"
    ? recipient.status.startsWith("5.") ? "permanent-failure" : "temporary-failure"
    : recipient.action === "delayed"
    ? "temporary-failure"
    : "delivered"
