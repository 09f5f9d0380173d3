import { Effect, Metric, MetricLabel, Option, Redacted } from "effect"
import { createHash, timingSafeEqual } from "node:crypto"
import type { DeliveryReport } from "../domain/deliveryStatus"
import { endsTheAddress } from "../domain/deliveryStatus"
import { deliveryReportsReceived } from "../domain/metrics"
import type { AlertsParts } from "./AlertsParts"

/** Whether a status callback may come in: the endpoint is `off` without a bearer token set. */
export type CallbackAccess = "off" | "refused" | "accepted"

const digest = (text: string) => createHash("sha256").update(text).digest()

/** Reports that providers make about emails after taking them: Notify's status callbacks, SMTP bounces. */
export const makeDeliveryReports = ({ emailStore, settings, store }: AlertsParts["Type"]) => {
  const expected = settings.statusCallbackToken === undefined ? undefined : digest(Redacted.value(settings.statusCallbackToken))

  /** Compared as digests of equal length, in constant time. */
  const statusCallbackAccess = (authorization: string | undefined): CallbackAccess => {
    if (expected === undefined) return "off"
    const bearer = /^Bearer +(\S+)$/i.exec(authorization?.trim() ?? "")
    return bearer !== null && timingSafeEqual(digest(bearer[1]!), expected) ? "accepted" : "refused"
  }

  /**
   * Keeps the report with its email; a permanent failure, the first time it is reported, ends every active
   * subscription of the address (`non_existent_email`) and deactivates its subscriber, in the same transaction.
   */
  const recordDeliveryReport = (report: DeliveryReport) =>
    store.transaction(Effect.gen(function*() {
      const outcome = yield* emailStore.recordDeliveryReport(report)
      if (outcome === "recorded" && endsTheAddress(report.status)) {
        const subscriber = yield* store.subscriberByAddress(report.address)
        if (Option.isSome(subscriber)) yield* store.deactivateSubscriber(subscriber.value.id, "non_existent_email")
      }
      return outcome
    })).pipe(
      Effect.tap((outcome) =>
        Metric.increment(Metric.taggedWithLabels(deliveryReportsReceived, [
          MetricLabel.make("source", report.source),
          MetricLabel.make("status", report.status),
          MetricLabel.make("outcome", outcome)
        ]))
      )
    )

  return { statusCallbackAccess, recordDeliveryReport }
}
