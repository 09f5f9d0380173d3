import { runWorker } from "@civicstack/jobs"
import type { WorkerOptions } from "@civicstack/jobs"
import { Clock, Context, Effect, Option, Schema } from "effect"
import { BatchReport } from "../api/reports"
import { toBatchReport } from "../domain/reports"
import { SIGNATURE_HEADER, signWebhookBody } from "../domain/signature"
import { LinkcheckStore } from "../storage/LinkcheckStore"
import { WebhookDelivery } from "./webhookJob"

export class WebhookTransportError extends Schema.TaggedError<WebhookTransportError>()("WebhookTransportError", {
  message: Schema.String
}) {}

/** Outbound POST of a webhook body; the live one goes through the private-address guard of link checks. */
export class WebhookTransport extends Context.Tag("@civicstack/core-linkcheck/WebhookTransport")<WebhookTransport, {
  readonly post: (
    uri: string,
    body: string,
    headers: Readonly<Record<string, string>>
  ) => Effect.Effect<{ readonly status: number }, WebhookTransportError>
}>() {}

export class WebhookNotDelivered extends Schema.TaggedError<WebhookNotDelivered>()("WebhookNotDelivered", {
  batchId: Schema.Int,
  reason: Schema.String
}) {
  override get message() {
    return `Webhook of batch ${this.batchId} not delivered: ${this.reason}`
  }
}

const encodeReport = Schema.encodeSync(BatchReport)

/** Connection failures, timeouts, 429 and 5xx are worth another attempt; other answers are final. */
const isRetryableStatus = (status: number) => status === 429 || status >= 500

/** Sends one batch's completion webhook and records the attempt; fails (so the queue retries) when worth retrying. */
export const deliverWebhook = (batchId: number) =>
  Effect.gen(function*() {
    const store = yield* LinkcheckStore
    const transport = yield* WebhookTransport
    const batch = yield* store.findBatch(batchId)
    if (Option.isNone(batch) || batch.value.webhook === null) return
    const webhook = batch.value.webhook
    const body = JSON.stringify(encodeReport(toBatchReport(batch.value)))
    const headers: Record<string, string> = { "content-type": "application/json" }
    if (webhook.secretToken !== null) headers[SIGNATURE_HEADER] = signWebhookBody(body, webhook.secretToken)

    const outcome = yield* Effect.either(transport.post(webhook.uri, body, headers))
    const attemptedAt = new Date(yield* Clock.currentTimeMillis)
    yield* store.recordWebhookAttempt({
      batchId,
      attemptedAt,
      statusCode: outcome._tag === "Right" ? outcome.right.status : null,
      error: outcome._tag === "Left" ? outcome.left.message : null
    })
    if (outcome._tag === "Left") {
      return yield* new WebhookNotDelivered({ batchId, reason: outcome.left.message })
    }
    const { status } = outcome.right
    if (isRetryableStatus(status)) {
      return yield* new WebhookNotDelivered({ batchId, reason: `the receiver answered ${status}` })
    }
    if (status >= 300) {
      yield* Effect.logWarning("Webhook refused by its receiver; not retried").pipe(
        Effect.annotateLogs({ batchId, status, uri: webhook.uri })
      )
    }
  })

export const runWebhookWorker = (options?: WorkerOptions) =>
  runWorker(WebhookDelivery, ({ batchId }) => deliverWebhook(batchId), options)
