import { Duration } from "effect"
import type { BatchReport, LinkReport } from "../api/reports"
import type { CheckParams, CreateBatchBody } from "../api/requests"
import type { Batch, Link } from "../domain/reports"
import type { BatchRequest, CheckRequest } from "../services/LinkChecker"

/** The mapping between the service's types and the snake_case wire contract of `./api`, used at every seam. */

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

export const batchToWire = (batch: Batch): BatchReport => ({
  id: batch.id,
  status: batch.completedAt === null ? "in_progress" : "completed",
  links: batch.links.map(linkToWire),
  totals: batch.totals,
  completed_at: batch.completedAt
})

export const checkRequestFromWire = (params: CheckParams): CheckRequest => ({
  uri: params.uri,
  checkedWithin: Duration.seconds(params.checked_within),
  synchronous: params.synchronous
})

export const batchRequestFromWire = (body: CreateBatchBody): BatchRequest => ({
  uris: body.uris,
  checkedWithin: Duration.seconds(body.checked_within),
  priority: body.priority,
  webhook: body.webhook_uri === undefined
    ? undefined
    : { uri: body.webhook_uri, secretToken: body.webhook_secret_token ?? null }
})
