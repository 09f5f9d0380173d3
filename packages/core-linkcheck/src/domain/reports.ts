import type { BatchReport, LinkReport } from "../api/reports"
import { wireTimestamp } from "../api/reports"
import type { BatchRecord, CheckRecord, LinkStatus } from "./check"
import { fragmentOf, judgeSection } from "./fragments"

/** One link as its check stands: pending, or the result of the check. */
export interface Link {
  readonly uri: string
  readonly status: LinkStatus
  /** When the check completed; null while pending. */
  readonly checked: Date | null
  readonly problemSummary: string | null
  readonly errors: ReadonlyArray<string>
  readonly warnings: ReadonlyArray<string>
  readonly danger: ReadonlyArray<string>
  readonly suggestedFix: string | null
}

export interface BatchTotals {
  readonly links: number
  readonly ok: number
  readonly caution: number
  readonly broken: number
  readonly pending: number
  /** Links with any danger, whatever their status. */
  readonly danger: number
}

export interface Batch {
  readonly id: number
  /** The links in the order their uris were given. */
  readonly links: ReadonlyArray<Link>
  readonly totals: BatchTotals
  /** When the last link got its result; null while any is pending. */
  readonly completedAt: Date | null
}

export const toLink = (check: CheckRecord): Link => {
  const result = check.result
  return {
    uri: check.uri,
    status: result?.status ?? "pending",
    checked: result === null ? null : check.completedAt,
    problemSummary: result?.problemSummary ?? null,
    errors: result?.errors ?? [],
    warnings: result?.warnings ?? [],
    danger: result?.danger ?? [],
    suggestedFix: result?.suggestedFix ?? null
  }
}

/**
 * A link as given (`uri`, fragment included) from the check of its page: with `checkFragments`, its fragment is
 * looked up among the page's anchors.
 */
export const linkOf = (check: CheckRecord, uri: string, checkFragments: boolean): Link => {
  if (uri === check.uri) return toLink(check)
  const result = check.result === null || !checkFragments
    ? check.result
    : judgeSection(check.result, check.anchors, fragmentOf(uri, check.uri))
  return toLink({ ...check, uri, result })
}

export const toBatch = (batch: BatchRecord): Batch => {
  const links = batch.checks.map((check, index) => linkOf(check, batch.uris[index]!, batch.checkFragments))
  const count = (status: LinkStatus) => links.filter((link) => link.status === status).length
  return {
    id: batch.id,
    links,
    totals: {
      links: links.length,
      ok: count("ok"),
      caution: count("caution"),
      broken: count("broken"),
      pending: count("pending"),
      danger: links.filter((link) => link.danger.length > 0).length
    },
    completedAt: batch.completedAt
  }
}

/** A link in the contract's shape: the form of every answer, webhook and stored report. */
export const linkToWire = (link: Link): LinkReport => ({
  uri: link.uri,
  status: link.status,
  checked: link.checked,
  problem_summary: link.problemSummary,
  errors: link.errors,
  warnings: link.warnings,
  danger: link.danger,
  suggested_fix: link.suggestedFix
})

const timestampJson = (date: Date | null) => (date === null ? "null" : `"${wireTimestamp(date)}"`)

/**
 * A link's `LinkReport` as JSON text, all but its uri: what follows `{"uri":<uri>,`. Written by hand, in the wire's
 * key order, because a batch's answer and every stored result would otherwise go through the schema's encoder link by
 * link; the tests compare it with the schema's encoding.
 */
export const linkJsonAfterUri = (link: Link): string =>
  `"status":"${link.status}","checked":${timestampJson(link.checked)},"problem_summary":${
    JSON.stringify(link.problemSummary)
  },"errors":${JSON.stringify(link.errors)},"warnings":${JSON.stringify(link.warnings)},"danger":${
    JSON.stringify(link.danger)
  },"suggested_fix":${JSON.stringify(link.suggestedFix)}}`

/** A batch's `BatchReport` as JSON text (see `linkJsonAfterUri`). */
export const batchJson = (batch: Batch): string => {
  const links = batch.links.map((link) => `{"uri":${JSON.stringify(link.uri)},${linkJsonAfterUri(link)}`).join(",")
  const { broken, caution, danger, links: total, ok, pending } = batch.totals
  return `{"id":${batch.id},"status":"${batch.completedAt === null ? "in_progress" : "completed"}","links":[${links}],` +
    `"totals":{"links":${total},"ok":${ok},"caution":${caution},"broken":${broken},"pending":${pending},` +
    `"danger":${danger}},"completed_at":${timestampJson(batch.completedAt)}}`
}

export const batchToWire = (batch: Batch): BatchReport => ({
  id: batch.id,
  status: batch.completedAt === null ? "in_progress" : "completed",
  links: batch.links.map(linkToWire),
  totals: batch.totals,
  completed_at: batch.completedAt
})
