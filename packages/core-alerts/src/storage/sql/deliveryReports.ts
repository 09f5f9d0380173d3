import { Int8, now } from "@civicstack/kit"
import type { sqlStoreTools } from "@civicstack/kit"
import { Effect, Schema } from "effect"
import type { Context } from "effect"
import { DELIVERY_STATUSES } from "../../domain/deliveryStatus"
import type { EmailStore } from "../EmailStore"
import { isUuid } from "../../domain/ids"

type Service = Context.Tag.Service<EmailStore>
type Tools = Effect.Effect.Success<ReturnType<typeof sqlStoreTools>>

const OutcomeRow = Schema.Struct({ found: Int8, inserted: Int8 })

const ReportRow = Schema.Struct({
  source: Schema.Literal("notify", "bounce"),
  provider_id: Schema.String,
  status: Schema.Literal(...DELIVERY_STATUSES),
  detail: Schema.NullOr(Schema.String),
  reported_at: Schema.NullOr(Schema.DateFromSelf),
  received_at: Schema.DateFromSelf
})

/** The delivery reports kept with the emails (`alerts.delivery_reports`). */
export const deliveryReportStatements = ({ rows, sql }: Tools): Pick<Service, "recordDeliveryReport" | "deliveryReportsOf"> => ({
  recordDeliveryReport: (report) =>
    isUuid(report.emailId)
      ? Effect.gen(function*() {
        const receivedAt = yield* now
        const [outcome] = yield* rows("recordDeliveryReport", OutcomeRow, sql`
          WITH email AS (
            SELECT id FROM alerts.emails WHERE id = ${report.emailId}::uuid AND lower(address) = lower(${report.address})
          ),
          inserted AS (
            INSERT INTO alerts.delivery_reports (email_id, source, provider_id, status, detail, reported_at, received_at)
            SELECT email.id, ${report.source}, ${report.providerId}, ${report.status}, ${report.detail},
              ${report.reportedAt?.toISOString() ?? null}::timestamptz, ${receivedAt.toISOString()}::timestamptz
            FROM email
            ON CONFLICT DO NOTHING
            RETURNING 1
          )
          SELECT (SELECT count(*) FROM email) AS found, (SELECT count(*) FROM inserted) AS inserted`)
        return outcome!.found === 0 ? "unknown" : outcome!.inserted === 0 ? "repeated" : "recorded"
      })
      : Effect.succeed("unknown"),

  deliveryReportsOf: (emailId) =>
    isUuid(emailId)
      ? Effect.map(
        rows("deliveryReportsOf", ReportRow, sql`
          SELECT source, provider_id, status, detail, reported_at, received_at FROM alerts.delivery_reports
          WHERE email_id = ${emailId}::uuid ORDER BY received_at, id`),
        (found) =>
          found.map((row) => ({
            source: row.source,
            providerId: row.provider_id,
            status: row.status,
            detail: row.detail,
            reportedAt: row.reported_at,
            receivedAt: row.received_at
          }))
      )
      : Effect.succeed([])
})
