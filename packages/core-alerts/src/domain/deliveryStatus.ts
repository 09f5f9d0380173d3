/** What a provider reports later about an email it took: Notify's statuses, which SMTP bounces are read as too. */
export const DELIVERY_STATUSES = ["delivered", "permanent-failure", "temporary-failure", "technical-failure"] as const
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number]

/** Where a report came from: Notify's status callback, or a delivery status notification (bounce) over SMTP. */
export type DeliveryReportSource = "notify" | "bounce"

export interface DeliveryReport {
  /** The email's id, as the provider was given it (Notify's `reference`, the bounce address's VERP part). */
  readonly emailId: string
  /** The address the provider says it sent to; a report whose address is not the email's changes nothing. */
  readonly address: string
  readonly source: DeliveryReportSource
  /** The provider's own id of the report's subject (Notify's notification id, the bounce's Message-ID). */
  readonly providerId: string
  readonly status: DeliveryStatus
  /** The provider's explanation, when it gives one (a bounce's diagnostic). */
  readonly detail: string | null
  /** When the provider says the outcome happened. */
  readonly reportedAt: Date | null
}

/** A report as kept with its email. */
export interface StoredDeliveryReport extends Omit<DeliveryReport, "emailId" | "address"> {
  readonly receivedAt: Date
}

/** `recorded`: kept now; `repeated`: the same report was kept before; `unknown`: no email has that id and address. */
export type DeliveryReportOutcome = "recorded" | "repeated" | "unknown"

/** Only a permanent failure says the address will never take mail. */
export const endsTheAddress = (status: DeliveryStatus) => status === "permanent-failure"
