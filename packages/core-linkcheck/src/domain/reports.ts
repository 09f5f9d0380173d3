import type { BatchReport, LinkReport } from "../api/reports"
import type { BatchRecord, CheckRecord } from "./check"

export const toLinkReport = (check: CheckRecord): LinkReport => {
  const result = check.result
  return {
    uri: check.uri,
    status: result?.status ?? "pending",
    checked: result === null ? null : check.completedAt,
    problem_summary: result?.problemSummary ?? null,
    errors: result?.errors ?? [],
    warnings: result?.warnings ?? [],
    danger: result?.danger ?? [],
    suggested_fix: result?.suggestedFix ?? null
  }
}

export const toBatchReport = (batch: BatchRecord): BatchReport => {
  const links = batch.checks.map(toLinkReport)
  const count = (status: LinkReport["status"]) => links.filter((link) => link.status === status).length
  return {
    id: batch.id,
    status: batch.completedAt === null ? "in_progress" : "completed",
    links,
    totals: {
      links: links.length,
      ok: count("ok"),
      caution: count("caution"),
      broken: count("broken"),
      pending: count("pending"),
      danger: links.filter((link) => link.danger.length > 0).length
    },
    completed_at: batch.completedAt
  }
}
