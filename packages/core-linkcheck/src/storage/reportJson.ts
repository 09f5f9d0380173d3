import { Schema } from "effect"
import { BatchReport, LinkReport } from "../api/reports"
import type { BatchRecord, CheckResult } from "../domain/check"
import type { Batch, Link } from "../domain/reports"
import { toBatch, toLink } from "../domain/reports"

/**
 * The reports the stores keep and hand out as JSON text, in the shape of the contract's `LinkReport` and
 * `BatchReport` (a webhook sends its batch's text as it is). The HTTP answers map the same records in `http/wire.ts`;
 * the tests compare a delivered webhook with the batch's report over HTTP, so the two stay alike.
 */

const linkReport = (link: Link): LinkReport => ({
  uri: link.uri,
  status: link.status,
  checked: link.checked,
  problem_summary: link.problemSummary,
  errors: link.errors,
  warnings: link.warnings,
  danger: link.danger,
  suggested_fix: link.suggestedFix
})

const batchReport = (batch: Batch): BatchReport => ({
  id: batch.id,
  status: batch.completedAt === null ? "in_progress" : "completed",
  links: batch.links.map(linkReport),
  totals: batch.totals,
  completed_at: batch.completedAt
})

const encodeBatchReport = Schema.encodeSync(BatchReport)

/** A batch's report as the JSON text of `BatchReport`. */
export const batchReportJson = (batch: BatchRecord): string => JSON.stringify(encodeBatchReport(batchReport(toBatch(batch))))

const encodeLinkReport = Schema.encodeSync(LinkReport)

/**
 * A completed check's `LinkReport` as JSON text, all but its uri: what follows `{"uri":<uri>,`, for a store that has
 * the uri where the text is written (the SQL store's row). The record's other fields do not reach the report.
 */
export const linkReportAfterUri = (result: CheckResult, completedAt: Date): string => {
  const { uri: _uri, ...afterUri } = encodeLinkReport(
    linkReport(toLink({ id: "", uri: "", priority: "high", createdAt: completedAt, completedAt, result }))
  )
  return JSON.stringify(afterUri).slice(1)
}
