import { decodeRows } from "@civicstack/kit"
import type { Context } from "effect"
import { Effect, Option, Schema } from "effect"
import type { BatchRecord, CheckRecord, ClaimedCheck } from "../../domain/check"
import { pagesOf, targetOf } from "../../domain/fragments"
import type { ClaimRequest, LinkcheckStore, NewBatch } from "../LinkcheckStore"
import { batchReportJson } from "../reportJson"
import type { checkStatements } from "./checks"
import { BatchRow, CheckRow, checkRecordOf, isBatchId, ROWS_PER_STATEMENT, timestamp, webhookOf } from "./rows"
import type { LinkcheckSqlTools } from "./tools"

type Store = Context.Tag.Service<LinkcheckStore>

const CountRow = Schema.Struct({ count: Schema.Number })

const WebhookReportRow = Schema.Struct({
  webhook_uri: Schema.NullOr(Schema.String),
  webhook_secret_token: Schema.NullOr(Schema.String),
  has_fragment_links: Schema.Boolean,
  completed: Schema.Boolean,
  completed_at_json: Schema.String,
  total: Schema.Number,
  ok: Schema.Number,
  caution: Schema.Number,
  broken: Schema.Number,
  pending: Schema.Number,
  danger: Schema.Number
})

const LinkReportsRow = Schema.Struct({ links: Schema.NullOr(Schema.String) })

/** Links whose parts of a webhook's report one statement joins. */
const REPORT_LINKS_PER_STATEMENT = 1000

const BatchLinkRow = Schema.Struct({ ...CheckRow.fields, fragment: Schema.NullOr(Schema.String) })

const AnchorsRow = Schema.Struct({ id: Schema.String, anchors: Schema.Array(Schema.String) })

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

/** What a claim made while writing a batch's checks in several statements has left: `claim` less the `claimed`. */
const claimLeftAfter = (claim: ClaimRequest, claimed: ReadonlyArray<ClaimedCheck>): ClaimRequest => {
  const heldByHost = new Map(claim.heldByHost)
  for (const { host } of claimed) heldByHost.set(host, (heldByHost.get(host) ?? 0) + 1)
  return { ...claim, limit: claim.limit - claimed.length, heldByHost }
}

/** The statements of batches and their links: writing and reading them, counting them down, deleting old ones. */
export const batchStatements = (tools: LinkcheckSqlTools, checks: ReturnType<typeof checkStatements>) => {
  const { atomically, batchColumns, checkColumnsButAnchors, sql, storeError, transaction } = tools
  const { insertChecks, insertClaimedChecks, lockReusableChecks, raiseToHighPriority, recordResults } = checks

  const insertBatch = (batch: NewBatch, pendingLinks: number, completedAt: Date | null, hasFragmentLinks: boolean) =>
    sql`
      INSERT INTO linkcheck.batches AS b (
        created_at, completed_at, webhook_uri, webhook_secret_token, pending_links, owner, trace_parent,
        check_fragments, has_fragment_links
      )
      VALUES (
        ${timestamp(batch.now)}::timestamptz, ${completedAt === null ? null : timestamp(completedAt)}::timestamptz,
        ${batch.webhook?.uri ?? null}::text, ${batch.webhook?.secretToken ?? null}::text, ${pendingLinks}::integer,
        ${batch.owner ?? null}::text, ${batch.traceParent ?? null}::text, ${batch.checkFragments ?? false}::boolean,
        ${hasFragmentLinks}::boolean
      )
      RETURNING ${batchColumns}
    `.pipe(Effect.flatMap(decodeRows(BatchRow)), Effect.map((rows) => rows[0]!))

  /** Links without fragments, the common case, go as a plain list of check ids. */
  const insertBatchLinks = (
    batchId: number,
    firstPosition: number,
    checkIds: ReadonlyArray<string>,
    fragments: ReadonlyArray<string | null>
  ) =>
    fragments.every((fragment) => fragment === null)
      ? sql`
        INSERT INTO linkcheck.batch_links (batch_id, position, check_id)
        SELECT ${batchId}::bigint, ${firstPosition}::integer + l.position - 1, l.check_id::bigint
        FROM jsonb_array_elements_text(${JSON.stringify(checkIds)}::jsonb) WITH ORDINALITY AS l(check_id, position)
      `
      : sql`
        INSERT INTO linkcheck.batch_links (batch_id, position, check_id, fragment)
        SELECT ${batchId}::bigint, ${firstPosition}::integer + l.position - 1, (l.link->>0)::bigint, l.link->>1
        FROM jsonb_array_elements(${JSON.stringify(checkIds.map((id, index) => [id, fragments[index]]))}::jsonb)
          WITH ORDINALITY AS l(link, position)
      `

  const writeBatch = (batch: NewBatch, claim?: ClaimRequest) =>
    transaction(Effect.gen(function*() {
      const targets = batch.uris.map(targetOf)
      const pages = pagesOf(targets, batch.checkFragments ?? false)
      const reused = batch.reuseSince === null ? [] : yield* lockReusableChecks(pages, batch.reuseSince)
      const waitingLow = reused.filter((check) => check.completedAt === null && check.priority === "low")
      if (batch.priority === "high" && waitingLow.length > 0) {
        yield* raiseToHighPriority(waitingLow.map((check) => check.id))
      }
      const checkByPage = new Map<string, CheckRecord>()
      for (const check of reused) {
        const raised = batch.priority === "high" && check.completedAt === null
        checkByPage.set(check.uri, raised ? { ...check, priority: "high" } : check)
      }
      const missing = pages.filter((page) => !checkByPage.has(page.uri))
      const claimed: Array<ClaimedCheck> = []
      for (let from = 0; from < missing.length; from += ROWS_PER_STATEMENT) {
        const chunk = missing.slice(from, from + ROWS_PER_STATEMENT)
        const created = claim === undefined
          ? yield* insertChecks(chunk, batch.priority, batch.now)
          : yield* insertClaimedChecks(chunk, batch.priority, batch.now, null, claimLeftAfter(claim, claimed)).pipe(
            Effect.map((written) => {
              claimed.push(...written.claimed)
              return written.created
            })
          )
        for (const check of created) checkByPage.set(check.uri, check)
      }
      const checks = targets.map(({ page }) => checkByPage.get(page)!)
      const fragments = targets.map(({ fragment }) => fragment)
      const pendingLinks = checks.filter((check) => check.completedAt === null).length
      const completedAt = pendingLinks > 0 ? null : latestCompletion(checks) ?? batch.now
      const row = yield* insertBatch(batch, pendingLinks, completedAt, fragments.some((fragment) => fragment !== null))
      for (let from = 0; from < checks.length; from += ROWS_PER_STATEMENT) {
        const to = from + ROWS_PER_STATEMENT
        yield* insertBatchLinks(row.id, from, checks.slice(from, to).map((check) => check.id), fragments.slice(from, to))
      }
      const created: BatchRecord = {
        id: row.id,
        createdAt: row.created_at,
        completedAt: row.completed_at,
        webhook: webhookOf(row.webhook_uri, row.webhook_secret_token),
        owner: row.owner,
        checks,
        uris: batch.uris,
        checkFragments: row.check_fragments
      }
      return { batch: created, claimed }
    }))

  const createBatch = (batch: NewBatch) =>
    writeBatch(batch).pipe(Effect.map(({ batch }) => batch), Effect.mapError(storeError("createBatch")))

  const createAndClaimBatch = ({ claim, ...batch }: Parameters<Store["createAndClaimBatch"]>[0]) =>
    writeBatch(batch, claim).pipe(Effect.mapError(storeError("createAndClaimBatch")))

  const readBatch = (id: number, owner?: string) =>
    Effect.gen(function*() {
      if (!isBatchId(id)) return Option.none()
      const [batch] = yield* sql`
        SELECT ${batchColumns} FROM linkcheck.batches b
        WHERE b.id = ${id}::bigint AND (${owner ?? null}::text IS NULL OR b.owner = ${owner ?? null}::text)
      `.pipe(
        Effect.flatMap(decodeRows(BatchRow))
      )
      if (batch === undefined) return Option.none()
      const links = yield* sql`
        SELECT ${checkColumnsButAnchors}, l.fragment
        FROM linkcheck.batch_links l JOIN linkcheck.checks c ON c.id = l.check_id
        WHERE l.batch_id = ${id}::bigint
        ORDER BY l.position
      `.pipe(Effect.flatMap(decodeRows(BatchLinkRow)))
      const anchors = batch.has_fragment_links && batch.check_fragments ? yield* anchorsOfLinkedPages(id) : new Map()
      const checks = new Map<string, CheckRecord>()
      const checkOf = (row: typeof BatchLinkRow.Type) => {
        let check = checks.get(row.id)
        if (check === undefined) {
          check = { ...checkRecordOf(row), anchors: anchors.get(row.id) ?? null }
          checks.set(row.id, check)
        }
        return check
      }
      return Option.some<BatchRecord>({
        id: batch.id,
        createdAt: batch.created_at,
        completedAt: batch.completed_at,
        webhook: webhookOf(batch.webhook_uri, batch.webhook_secret_token),
        owner: batch.owner,
        checks: links.map(checkOf),
        uris: links.map((row) => (row.fragment === null ? row.uri : `${row.uri}#${row.fragment}`)),
        checkFragments: batch.check_fragments
      })
    })

  const findBatch = (id: number, owner?: string) => readBatch(id, owner).pipe(Effect.mapError(storeError("findBatch")))

  /** The anchors of the pages that links of this batch name sections of, each page once. */
  const anchorsOfLinkedPages = (batchId: number) =>
    sql`
      SELECT c.id::text AS id, c.anchors FROM linkcheck.checks c
      WHERE c.anchors IS NOT NULL AND c.id IN (
        SELECT l.check_id FROM linkcheck.batch_links l WHERE l.batch_id = ${batchId}::bigint AND l.fragment IS NOT NULL
      )
    `.pipe(
      Effect.flatMap(decodeRows(AnchorsRow)),
      Effect.map((rows) => new Map(rows.map((row) => [row.id, row.anchors] as const)))
    )

  /**
   * The report is built as `batchReportJson` builds it; the shared storage suite compares the two. A batch with links
   * into sections has its report built here from `findBatch`, since each such link's report is its own, not its page's.
   * The links' parts are joined in the database a group at a time: one text of all 5000 would make PGlite's memory,
   * which never shrinks, grow by about 20 MB for the moment it is built.
   */
  const findWebhookReport = (id: number) =>
    Effect.gen(function*() {
      if (!isBatchId(id)) return Option.none()
      const [row] = yield* sql`
        SELECT b.webhook_uri, b.webhook_secret_token, b.has_fragment_links, b.completed_at IS NOT NULL AS completed,
          coalesce(to_json(${sql.literal(wireTimestamp("b.completed_at"))})::text, 'null') AS completed_at_json,
          l.total, l.ok, l.caution, l.broken, l.pending, l.danger
        FROM linkcheck.batches b CROSS JOIN LATERAL (
          SELECT
            count(*)::integer AS total,
            (count(*) FILTER (WHERE c.status = 'ok'))::integer AS ok,
            (count(*) FILTER (WHERE c.status = 'caution'))::integer AS caution,
            (count(*) FILTER (WHERE c.status = 'broken'))::integer AS broken,
            (count(*) FILTER (WHERE c.status IS NULL))::integer AS pending,
            (count(*) FILTER (WHERE coalesce(c.danger, '[]'::jsonb) <> '[]'::jsonb))::integer AS danger
          FROM linkcheck.batch_links bl JOIN linkcheck.checks c ON c.id = bl.check_id
          WHERE bl.batch_id = b.id AND NOT b.has_fragment_links
        ) l
        WHERE b.id = ${id}::bigint
      `.pipe(Effect.flatMap(decodeRows(WebhookReportRow)))
      if (row === undefined) return Option.none()
      const webhook = webhookOf(row.webhook_uri, row.webhook_secret_token)
      if (row.has_fragment_links) {
        return Option.map(yield* readBatch(id), (batch) => ({ webhook, reportJson: batchReportJson(batch) }))
      }
      const links: Array<string> = []
      for (let from = 0; from < row.total; from += REPORT_LINKS_PER_STATEMENT) {
        const [group] = yield* sql`
          SELECT string_agg(${sql.literal(storedOrBuiltLinkReport)}, ',' ORDER BY bl.position) AS links
          FROM linkcheck.batch_links bl JOIN linkcheck.checks c ON c.id = bl.check_id
          WHERE bl.batch_id = ${id}::bigint AND bl.position >= ${from}::integer
            AND bl.position < ${from + REPORT_LINKS_PER_STATEMENT}::integer
        `.pipe(Effect.flatMap(decodeRows(LinkReportsRow)))
        if (group?.links) links.push(group.links)
      }
      const totals = `{"links":${row.total},"ok":${row.ok},"caution":${row.caution},"broken":${row.broken},` +
        `"pending":${row.pending},"danger":${row.danger}}`
      const status = row.completed ? "completed" : "in_progress"
      const reportJson = `{"id":${id},"status":"${status}","links":[${links.join(",")}],"totals":${totals},` +
        `"completed_at":${row.completed_at_json}}`
      return Option.some({ webhook, reportJson })
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

  return { createBatch, createAndClaimBatch, findBatch, findWebhookReport, completeChecks, deleteCompletedBefore }
}
