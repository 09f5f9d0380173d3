import type { BatchRecord, CheckResult } from "../domain/check"
import { batchJson, linkJsonAfterUri, toBatch, toLink } from "../domain/reports"

/**
 * The reports the stores keep and hand out as JSON text, in the shape of the contract's `LinkReport` and
 * `BatchReport` (a webhook sends its batch's text as it is), mapped as the HTTP answers are.
 */

/** A batch's report as the JSON text of `BatchReport`. */
export const batchReportJson = (batch: BatchRecord): string => batchJson(toBatch(batch))

/**
 * A completed check's `LinkReport` as JSON text, all but its uri: what follows `{"uri":<uri>,`, for a store that has
 * the uri where the text is written (the SQL store's row). The record's other fields do not reach the report.
 */
export const linkReportAfterUri = (result: CheckResult, completedAt: Date): string =>
  linkJsonAfterUri(toLink({ id: "", uri: "", priority: "high", createdAt: completedAt, completedAt, result, anchors: null }))
