import { Effect, Schema } from "effect"
import type { WebhookAttempt } from "../LinkcheckStore"
import { isBatchId, timestamp } from "./rows"
import type { LinkcheckSqlTools } from "./tools"

const WebhookAttemptRow = Schema.Struct({
  batch_id: Schema.NumberFromString,
  attempted_at: Schema.DateFromSelf,
  status_code: Schema.NullOr(Schema.Number),
  error: Schema.NullOr(Schema.String),
  final: Schema.Boolean
})

/** The statements of webhook attempts. */
export const webhookAttemptStatements = ({ rows, sql, storeError }: LinkcheckSqlTools) => {
  const recordWebhookAttempt = (attempt: WebhookAttempt) =>
    sql`
      INSERT INTO linkcheck.webhook_attempts (batch_id, attempted_at, status_code, error, final)
      VALUES (
        ${attempt.batchId}::bigint, ${timestamp(attempt.attemptedAt)}::timestamptz,
        ${attempt.statusCode}::integer, ${attempt.error}::text, ${attempt.final}
      )
    `.pipe(Effect.asVoid, Effect.mapError(storeError("recordWebhookAttempt")))

  const webhookAttempts = (batchId: number) =>
    isBatchId(batchId)
      ? rows("webhookAttempts", WebhookAttemptRow, sql`
        SELECT batch_id::text AS batch_id, attempted_at, status_code, error, final FROM linkcheck.webhook_attempts
        WHERE batch_id = ${batchId}::bigint
        ORDER BY attempted_at, id
      `).pipe(
        Effect.map((found) =>
          found.map((row): WebhookAttempt => ({
            batchId: row.batch_id,
            attemptedAt: row.attempted_at,
            statusCode: row.status_code,
            error: row.error,
            final: row.final
          }))
        )
      )
      : Effect.succeed([])

  return { recordWebhookAttempt, webhookAttempts }
}
