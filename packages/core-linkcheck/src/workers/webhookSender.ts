import { runWorker } from "@civicstack/jobs"
import type { WorkerOptions } from "@civicstack/jobs"
import { now } from "@civicstack/kit"
import { Effect, Either, Metric, Option, Schema } from "effect"
import { SIGNATURE_HEADER, signWebhookBody } from "../domain/signature"
import { webhookDeliveryJob } from "../domain/jobs"
import { webhookAttempts } from "../domain/metrics"
import { LinkcheckParts } from "../services/LinkcheckParts"

export class WebhookNotDelivered extends Schema.TaggedError<WebhookNotDelivered>()("WebhookNotDelivered", {
  batchId: Schema.Int,
  reason: Schema.String
}) {
  override get message() {
    return `Webhook of batch ${this.batchId} not delivered: ${this.reason}`
  }
}

const attemptOutcome = (outcome: Either.Either<{ readonly status: number }, unknown>, final: boolean) =>
  !final ? "retrying" : Either.isLeft(outcome) ? "failed" : outcome.right.status >= 300 ? "refused" : "delivered"

/** A receiver that answers 429 or 5xx may take the webhook later; any other answer is final. */
const receiverMayAcceptLater = (status: number) => status === 429 || status >= 500

/**
 * Sends one batch's completion webhook and records the attempt; fails (so the queue retries) when worth retrying.
 * The attempt that ends the delivery is recorded as final in the same statement, so a delivery run again after a
 * crash (its job not yet marked done) sends nothing more.
 */
export const deliverWebhook = (batchId: number) =>
  Effect.gen(function*() {
    const { store, webhookTransport } = yield* LinkcheckParts
    const report = yield* store.findWebhookReport(batchId)
    if (Option.isNone(report) || report.value.webhook === null) return
    if ((yield* store.webhookAttempts(batchId)).some((attempt) => attempt.final)) return
    const { reportJson: body, webhook } = report.value
    const headers: Record<string, string> = { "content-type": "application/json" }
    if (webhook.secretToken !== null) headers[SIGNATURE_HEADER] = signWebhookBody(body, webhook.secretToken)

    const outcome = yield* Effect.either(webhookTransport.post(webhook.uri, body, headers))
    const attemptedAt = yield* now
    const final = outcome._tag === "Left" ? outcome.left.permanent : !receiverMayAcceptLater(outcome.right.status)
    yield* store.recordWebhookAttempt({
      batchId,
      attemptedAt,
      statusCode: outcome._tag === "Right" ? outcome.right.status : null,
      error: outcome._tag === "Left" ? outcome.left.message : null,
      final
    })
    yield* Metric.increment(Metric.tagged(webhookAttempts, "outcome", attemptOutcome(outcome, final)))
    if (outcome._tag === "Left") {
      if (final) {
        return yield* Effect.logWarning("Webhook cannot be delivered; not retried").pipe(
          Effect.annotateLogs({ batchId, reason: outcome.left.message })
        )
      }
      return yield* new WebhookNotDelivered({ batchId, reason: outcome.left.message })
    }
    const { status } = outcome.right
    if (receiverMayAcceptLater(status)) {
      return yield* new WebhookNotDelivered({ batchId, reason: `the receiver answered ${status}` })
    }
    if (status >= 300) {
      yield* Effect.logWarning("Webhook refused by its receiver; not retried").pipe(
        Effect.annotateLogs({ batchId, status, uri: webhook.uri })
      )
    }
  })

export const runWebhookWorker = (options?: WorkerOptions) =>
  runWorker(webhookDeliveryJob, ({ batchId }) => deliverWebhook(batchId), options)
