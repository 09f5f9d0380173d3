import { decodeRows } from "@civicstack/kit"
import type { Context } from "effect"
import { Effect, Option, Schema } from "effect"
import type { BatchRecord, CheckRecord } from "../../domain/check"
import type { LinkcheckStore, NewBatch } from "../LinkcheckStore"
import type { checkStatements } from "./checks"
import { BatchRow, CheckRow, checkRecordOf, isBatchId, ROWS_PER_STATEMENT, timestamp, webhookOf } from "./rows"
import type { LinkcheckSqlTools } from "./tools"

type Store = Context.Tag.Service<LinkcheckStore>

const CountRow = Schema.Struct({ count: Schema.Number })

const WebhookReportRow = Schema.Struct({
  webhook_uri: Schema.NullOr(Schema.String),
  webhook_secret_token: Schema.NullOr(Schema.String),
  report: Schema.String
})

/** `Timestamp` of `./api`: RFC 3339 UTC, to the second. */
const wireTimestamp = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`

/**
 * A check's part of a batch report, as JSON text whose keys are those of `LinkReport` in its order: the one stored
 * with its result (see `recordResults`), or, for a pending check or one completed before parts were stored, built
 * now from its columns (a row's columns are the keys of its JSON object).
 */
const storedOrBuiltLinkReport = `coalesce(c.link_report, (SELECT to_json(link)::text FROM (
  SELECT c.uri, coalesce(c.status, 'pending') AS status, ${wireTimestamp("c.completed_at")} AS checked,
    c.problem_summary, coalesce(c.errors, '[]'::jsonb) AS errors, coalesce(c.warnings, '[]'::jsonb) AS warnings,
    coalesce(c.danger, '[]'::jsonb) AS danger, c.suggested_fix
) link))`

const latestCompletion = (checks: ReadonlyArray<CheckRecord>): Date | null =>
  checks.reduce<Date | null>(
    (latest, check) =>
      check.completedAt !== null && (latest === null || check.completedAt > latest) ? check.completedAt : latest,
    null
  )

/** The statements of batches and their links: writing and reading them, counting them down, deleting old ones. */
export const batchStatements = (tools: LinkcheckSqlTools, checks: ReturnType<typeof checkStatements>) => {
  const { atomically, batchColumns, checkColumns, sql, storeError, transaction } = tools
  const { insertChecks, lockReusableChecks, raiseToHighPriority, recordResults } = checks

  const insertBatch = (batch: NewBatch, pendingLinks: number, completedAt: Date | null) =>
    sql`
      INSERT INTO linkcheck.batches AS b (
        created_at, completed_at, webhook_uri, webhook_secret_token, pending_links, owner, trace_parent
      )
      VALUES (
        ${timestamp(batch.now)}::timestamptz, ${completedAt === null ? null : timestamp(completedAt)}::timestamptz,
        ${batch.webhook?.uri ?? null}::text, ${batch.webhook?.secretToken ?? null}::text, ${pendingLinks}::integer,
        ${batch.owner ?? null}::text, ${batch.traceParent ?? null}::text
      )
      RETURNING ${batchColumns}
    `.pipe(Effect.flatMap(decodeRows(BatchRow)), Effect.map((rows) => rows[0]!))

  const insertBatchLinks = (batchId: number, firstPosition: number, checkIds: ReadonlyArray<string>) =>
    sql`
      INSERT INTO linkcheck.batch_links (batch_id, position, check_id)
      SELECT ${batchId}::bigint, ${firstPosition}::integer + l.position - 1, l.check_id::bigint
      FROM jsonb_array_elements_text(${JSON.stringify(checkIds)}::jsonb) WITH ORDINALITY AS l(check_id, position)
    `

  const createBatch = (batch: NewBatch) =>
    transaction(Effect.gen(function*() {
      const distinctUris = [...new Set(batch.uris)]
      const reused = batch.reuseSince === null ? [] : yield* lockReusableChecks(distinctUris, batch.reuseSince)
      const waitingLow = reused.filter((check) => check.completedAt === null && check.priority === "low")
      if (batch.priority === "high" && waitingLow.length > 0) {
        yield* raiseToHighPriority(waitingLow.map((check) => check.id))
      }
      const checkByUri = new Map<string, CheckRecord>()
      for (const check of reused) {
        const raised = batch.priority === "high" && check.completedAt === null
        checkByUri.set(check.uri, raised ? { ...check, priority: "high" } : check)
      }
      const missing = distinctUris.filter((uri) => !checkByUri.has(uri))
      for (let from = 0; from < missing.length; from += ROWS_PER_STATEMENT) {
        const chunk = missing.slice(from, from + ROWS_PER_STATEMENT)
        for (const check of yield* insertChecks(chunk, batch.priority, batch.now)) checkByUri.set(check.uri, check)
      }
      const checks = batch.uris.map((uri) => checkByUri.get(uri)!)
      const pendingLinks = checks.filter((check) => check.completedAt === null).length
      const completedAt = pendingLinks > 0 ? null : latestCompletion(checks) ?? batch.now
      const row = yield* insertBatch(batch, pendingLinks, completedAt)
      for (let from = 0; from < checks.length; from += ROWS_PER_STATEMENT) {
        yield* insertBatchLinks(row.id, from, checks.slice(from, from + ROWS_PER_STATEMENT).map((check) => check.id))
      }
      return {
        id: row.id,
        createdAt: row.created_at,
        completedAt: row.completed_at,
        webhook: webhookOf(row.webhook_uri, row.webhook_secret_token),
        owner: row.owner,
        checks
      } satisfies BatchRecord
    })).pipe(Effect.mapError(storeError("createBatch")))

  const findBatch = (id: number, owner?: string) =>
    Effect.gen(function*() {
      if (!isBatchId(id)) return Option.none()
      const [batch] = yield* sql`
        SELECT ${batchColumns} FROM linkcheck.batches b
        WHERE b.id = ${id}::bigint AND (${owner ?? null}::text IS NULL OR b.owner = ${owner ?? null}::text)
      `.pipe(
        Effect.flatMap(decodeRows(BatchRow))
      )
      if (batch === undefined) return Option.none()
      const checks = yield* sql`
        SELECT ${checkColumns} FROM linkcheck.batch_links l JOIN linkcheck.checks c ON c.id = l.check_id
        WHERE l.batch_id = ${id}::bigint
        ORDER BY l.position
      `.pipe(Effect.flatMap(decodeRows(CheckRow)))
      return Option.some<BatchRecord>({
        id: batch.id,
        createdAt: batch.created_at,
        completedAt: batch.completed_at,
        webhook: webhookOf(batch.webhook_uri, batch.webhook_secret_token),
        owner: batch.owner,
        checks: checks.map(checkRecordOf)
      })
    }).pipe(Effect.mapError(storeError("findBatch")))

  /** The report is built as `batchReportJson` builds it; the shared storage suite compares the two. */
  const findWebhookReport = (id: number) =>
    Effect.gen(function*() {
      if (!isBatchId(id)) return Option.none()
      const [row] = yield* sql`
        SELECT b.webhook_uri, b.webhook_secret_token,
          -- joined as text: the links' parts are JSON already, and parsing them back into one value would cost more
          '{"id":' || b.id || ',"status":'
            || CASE WHEN b.completed_at IS NULL THEN '"in_progress"' ELSE '"completed"' END
            || ',"links":[' || coalesce(l.links, '') || ']'
            || ',"totals":{"links":' || l.total || ',"ok":' || l.ok || ',"caution":' || l.caution
            || ',"broken":' || l.broken || ',"pending":' || l.pending || ',"danger":' || l.danger || '}'
            || ',"completed_at":' || coalesce(to_json(${sql.literal(wireTimestamp("b.completed_at"))})::text, 'null')
            || '}' AS report
        FROM linkcheck.batches b CROSS JOIN LATERAL (
          SELECT
            string_agg(${sql.literal(storedOrBuiltLinkReport)}, ',' ORDER BY bl.position) AS links,
            count(*)::integer AS total,
            (count(*) FILTER (WHERE c.status = 'ok'))::integer AS ok,
            (count(*) FILTER (WHERE c.status = 'caution'))::integer AS caution,
            (count(*) FILTER (WHERE c.status = 'broken'))::integer AS broken,
            (count(*) FILTER (WHERE c.status IS NULL))::integer AS pending,
            (count(*) FILTER (WHERE coalesce(c.danger, '[]'::jsonb) <> '[]'::jsonb))::integer AS danger
          FROM linkcheck.batch_links bl JOIN linkcheck.checks c ON c.id = bl.check_id
          WHERE bl.batch_id = b.id
        ) l
        WHERE b.id = ${id}::bigint
      `.pipe(Effect.flatMap(decodeRows(WebhookReportRow)))
      return Option.map(Option.fromNullable(row), (found) => ({
        webhook: webhookOf(found.webhook_uri, found.webhook_secret_token),
        reportJson: found.report
      }))
    }).pipe(Effect.mapError(storeError("findWebhookReport")))

  /**
   * Run after the checks' rows are updated, so that it sees every batch that waits for them. The batches are locked
   * in id order first, so that two workers counting down the same batches cannot deadlock.
   */
  const countDownBatches = (checkIds: ReadonlyArray<string>, now: Date) => {
    const links = sql`
      SELECT batch_id, count(*)::integer AS links FROM linkcheck.batch_links
      WHERE check_id IN (SELECT jsonb_array_elements_text(${JSON.stringify(checkIds)}::jsonb)::bigint)
      GROUP BY batch_id
    `
    // The subquery cannot be merged into the update (it locks rows), so it locks them in its own order, by id.
    return sql`
      UPDATE linkcheck.batches b
      SET pending_links = b.pending_links - l.links,
        completed_at = CASE WHEN b.pending_links = l.links THEN ${timestamp(now)}::timestamptz END
      FROM (
        SELECT locked.id, counted.links FROM linkcheck.batches locked JOIN (${links}) counted ON counted.batch_id = locked.id
        WHERE locked.completed_at IS NULL
        ORDER BY locked.id FOR NO KEY UPDATE OF locked
      ) l
      WHERE b.id = l.id AND b.completed_at IS NULL
      RETURNING ${batchColumns}
    `.pipe(
      Effect.flatMap(decodeRows(BatchRow)),
      Effect.map((rows) =>
        rows
          .filter((row) => row.completed_at !== null)
          .map((row) => ({
            id: row.id,
            webhook: webhookOf(row.webhook_uri, row.webhook_secret_token),
            traceParent: row.trace_parent
          }))
          .sort((a, b) => a.id - b.id)
      )
    )
  }

  const completeChecks = (input: Parameters<Store["completeChecks"]>[0]) =>
    atomically(Effect.gen(function*() {
      const recorded = yield* recordResults(input.workerId, input.results, input.now)
      if (recorded.length === 0) return { recorded, completedBatches: [] }
      return { recorded, completedBatches: yield* countDownBatches(recorded, input.now) }
    })).pipe(Effect.mapError(storeError("completeChecks")))

  const countDeleted = (statement: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
    statement.pipe(Effect.flatMap(decodeRows(CountRow)), Effect.map((rows) => rows[0]?.count ?? 0))

  const deleteCompletedBefore = (before: Date) => {
    const cutoff = timestamp(before)
    return transaction(Effect.gen(function*() {
      // locked first, so that a batch created meanwhile with one of these checks is visible to the next statement
      yield* sql`SELECT id FROM linkcheck.checks WHERE completed_at < ${cutoff}::timestamptz ORDER BY id FOR UPDATE`
      const batches = yield* countDeleted(sql`
        WITH deleted AS (
          DELETE FROM linkcheck.batches WHERE id IN (
            SELECT l.batch_id FROM linkcheck.batch_links l JOIN linkcheck.checks c ON c.id = l.check_id
            WHERE c.completed_at < ${cutoff}::timestamptz
          )
          RETURNING id
        ), deleted_links AS (
          DELETE FROM linkcheck.batch_links WHERE batch_id IN (SELECT id FROM deleted)
        )
        SELECT count(*)::integer AS count FROM deleted
      `)
      const checks = yield* countDeleted(sql`
        WITH deleted AS (DELETE FROM linkcheck.checks WHERE completed_at < ${cutoff}::timestamptz RETURNING 1)
        SELECT count(*)::integer AS count FROM deleted
      `)
      return { checks, batches }
    })).pipe(Effect.mapError(storeError("deleteCompletedBefore")))
  }

  return { createBatch, findBatch, findWebhookReport, completeChecks, deleteCompletedBefore }
}
