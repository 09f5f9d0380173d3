import { decodeRows } from "@civicstack/kit"
import type { Context } from "effect"
import { Effect, Option, Schema } from "effect"
import type { CheckPriority, CheckRecord, ClaimedCheck } from "../../domain/check"
import { distinctPages } from "../../domain/fragments"
import type { WantedPage } from "../../domain/fragments"
import { siteOf } from "../../domain/site"
import type { CheckCompletion, ClaimRequest, LinkcheckStore } from "../LinkcheckStore"
import { linkReportAfterUri } from "../reportJson"
import { CheckRow, checkRecordOf, isCheckId, Priority, storedPriority, timestamp } from "./rows"
import type { LinkcheckSqlTools } from "./tools"

type Store = Context.Tag.Service<LinkcheckStore>

const ClaimedRow = Schema.Struct({
  id: Schema.String,
  uri: Schema.String,
  host: Schema.String,
  priority: Priority,
  attempts: Schema.Number,
  reads_anchors: Schema.Boolean
})

const WorkloadRow = Schema.Struct({
  pending: Schema.Number,
  claimed: Schema.Number,
  oldest_claim_at: Schema.NullOr(Schema.DateFromSelf)
})

const NewClaimedRow = Schema.Struct({ ...ClaimedRow.fields, claimed: Schema.Boolean })

const IdRow = Schema.Struct({ id: Schema.String })
const NewCheckRow = Schema.Struct({ id: Schema.String, uri: Schema.String })

/** The pages as JSON records: `uri` and `anchors` (whether its check reads them), with sites `host` and `position`. */
const pagesJson = (pages: ReadonlyArray<WantedPage>, withSites = false) =>
  JSON.stringify(pages.map(({ readsAnchors, uri }, index) =>
    withSites ? { uri, host: siteOf(uri), anchors: readsAnchors, position: index } : { uri, anchors: readsAnchors }
  ))

const claimedCheckOf = (row: typeof ClaimedRow.Type): ClaimedCheck => ({
  id: row.id,
  uri: row.uri,
  host: row.host,
  priority: row.priority,
  attempts: row.attempts,
  readsAnchors: row.reads_anchors
})

/** High priority first, then in the order the checks were created. */
const byClaimOrder = (a: ClaimedCheck, b: ClaimedCheck) =>
  a.priority === b.priority ? Number(a.id) - Number(b.id) : a.priority === "high" ? -1 : 1

/** A check just created, of which the store returned the id. */
const newCheckRecord = (
  row: { readonly id: string; readonly uri: string },
  priority: CheckPriority,
  now: Date
): CheckRecord => ({
  id: row.id,
  uri: row.uri,
  priority,
  createdAt: now,
  completedAt: null,
  result: null,
  anchors: null
})

/** The statements of checks: finding and creating them, claims, results and the workload. */
export const checkStatements = (tools: LinkcheckSqlTools) => {
  const { checkColumns, rows, sha256, sha256Param, sql, storeError } = tools

  const findCheck = (
    uri: string,
    options: { readonly since: Date; readonly completedOnly: boolean; readonly readsAnchors?: boolean }
  ) =>
    rows("findCheck", CheckRow, sql`
      SELECT ${checkColumns} FROM linkcheck.checks c
      WHERE c.uri_hash = ${sha256Param(uri)} AND c.uri = ${uri}::text
        AND c.created_at >= ${timestamp(options.since)}::timestamptz
      ${sql.literal(options.completedOnly ? "AND c.completed_at IS NOT NULL" : "")}
      ${sql.literal(options.readsAnchors === true ? "AND c.reads_anchors" : "")}
      ORDER BY c.created_at DESC, c.id DESC
      LIMIT 1
    `).pipe(Effect.map((found) => Option.map(Option.fromNullable(found[0]), checkRecordOf)))

  const createCheck = (input: Parameters<Store["createCheck"]>[0]) =>
    rows("createCheck", CheckRow, sql`
      INSERT INTO linkcheck.checks AS c (
        uri, uri_hash, host, host_hash, priority, created_at, claimed_by, claimed_until, claimed_at, attempts,
        reads_anchors
      )
      SELECT
        n.uri, ${sha256("n.uri")}, n.host, ${sha256("n.host")}, ${storedPriority(input.priority)}::smallint,
        ${timestamp(input.now)}::timestamptz, ${input.claim?.workerId ?? null}::text,
        ${input.claim ? timestamp(input.claim.until) : null}::timestamptz,
        ${input.claim ? timestamp(input.now) : null}::timestamptz, ${input.claim ? 1 : 0}::integer,
        ${input.readsAnchors ?? false}::boolean
      FROM (SELECT ${input.uri}::text AS uri, ${siteOf(input.uri)}::text AS host) n
      RETURNING ${checkColumns}
    `).pipe(Effect.map((created) => checkRecordOf(created[0]!)))

  /**
   * Locks the checks it returns, so that none completes or disappears before the batch is written. A page whose
   * anchors are wanted reuses only a check that reads them.
   */
  const lockReusableChecks = (pages: ReadonlyArray<WantedPage>, since: Date) =>
    sql`
      SELECT ${checkColumns} FROM linkcheck.checks c
      WHERE c.id IN (
        SELECT DISTINCT ON (r.uri) r.id
        FROM jsonb_to_recordset(${pagesJson(pages)}::jsonb) AS wanted(uri text, anchors boolean)
        JOIN linkcheck.checks r ON r.uri_hash = ${sha256("wanted.uri")} AND r.uri = wanted.uri
        WHERE r.created_at >= ${timestamp(since)}::timestamptz AND (r.reads_anchors OR NOT wanted.anchors)
        ORDER BY r.uri, r.created_at DESC, r.id DESC
      )
      ORDER BY c.id
      FOR NO KEY UPDATE
    `.pipe(Effect.flatMap(decodeRows(CheckRow)), Effect.map((rows) => rows.map(checkRecordOf)))

  const raiseToHighPriority = (ids: ReadonlyArray<string>) =>
    sql`
      UPDATE linkcheck.checks SET priority = 1
      WHERE id IN (SELECT jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb)::bigint)
    `

  /**
   * A condition on a wanted page `n` (`uri`, `anchors`): it has no check created at or after `since` that would serve
   * it; always true without `since`.
   */
  const unlessReusable = (since: Date | null) =>
    since === null ? sql.literal("true") : sql`NOT EXISTS (
      SELECT 1 FROM linkcheck.checks r
      WHERE r.uri_hash = ${sha256("n.uri")} AND r.uri = n.uri AND r.created_at >= ${timestamp(since)}::timestamptz
        AND (r.reads_anchors OR NOT n.anchors)
    )`

  /**
   * New checks of `pages`, but none of a page that has a check created at or after `unlessCreatedSince` that would
   * serve it. Only the new ids come back: the rest of each new check is known here, and a batch can add 5000 of them.
   */
  const insertChecks = (
    pages: ReadonlyArray<WantedPage>,
    priority: CheckPriority,
    now: Date,
    unlessCreatedSince: Date | null = null
  ) =>
    sql`
      INSERT INTO linkcheck.checks AS c (uri, uri_hash, host, host_hash, priority, created_at, reads_anchors)
      SELECT n.uri, ${sha256("n.uri")}, n.host, ${sha256("n.host")}, ${storedPriority(priority)}::smallint,
        ${timestamp(now)}::timestamptz, n.anchors
      FROM jsonb_to_recordset(${pagesJson(pages, true)}::jsonb) AS n(uri text, host text, anchors boolean)
      WHERE ${unlessReusable(unlessCreatedSince)}
      RETURNING c.id::text AS id, c.uri
    `.pipe(
      Effect.flatMap(decodeRows(NewCheckRow)),
      Effect.map((rows) => rows.map((row) => newCheckRecord(row, priority, now)))
    )

  const createChecks = (input: Parameters<Store["createChecks"]>[0]) => {
    const pages = distinctPages(input.pages)
    return pages.length === 0
      ? Effect.succeed([])
      : insertChecks(pages, input.priority, input.now, input.reuseSince).pipe(Effect.mapError(storeError("createChecks")))
  }

  /**
   * The common table expressions that give, as `allowances (host_hash, allowance)`, how many more checks of each host
   * of `hosts` (a table expression of `host_hash`; a null is passed over) the request may claim (see `ClaimRequest`).
   * Hosts are told apart by their hash alone: a collision would only make two hosts share one limit.
   */
  const allowances = (request: ClaimRequest, hosts: string) => {
    const now = timestamp(request.now)
    const perHost = Math.floor(request.perHost)
    const ahead = Math.max(0, Math.floor(request.aheadPerHost))
    return sql`
      live AS (
        SELECT greatest(count(*), 1)::integer AS workers FROM linkcheck.workers
        WHERE heartbeat_at >= ${timestamp(request.workersAliveSince)}::timestamptz
      ),
      limits AS (
        SELECT CASE WHEN workers > 1 THEN 0 ELSE ${ahead}::integer END AS ahead,
          (${perHost}::integer + workers - 1) / workers AS share
        FROM live
      ),
      held_by_others AS (
        SELECT host_hash, count(*)::integer AS checks FROM linkcheck.checks
        WHERE completed_at IS NULL AND claimed_until >= ${now}::timestamptz AND claimed_by <> ${request.workerId}
        GROUP BY host_hash
      ),
      held_by_worker AS (
        SELECT ${sha256("f.key")} AS host_hash, f.value::integer AS checks
        FROM jsonb_each_text(${JSON.stringify(Object.fromEntries(request.heldByHost))}::jsonb) f
      ),
      allowances AS (
        SELECT h.host_hash, greatest(
          least(
            CASE WHEN o.checks IS NULL THEN ${perHost}::integer + m.ahead ELSE ${perHost}::integer - o.checks END,
            m.share + m.ahead
          ) - coalesce(w.checks, 0),
          0
        ) AS allowance
        FROM ${sql.literal(hosts)} h
        CROSS JOIN limits m
        LEFT JOIN held_by_others o ON o.host_hash = h.host_hash
        LEFT JOIN held_by_worker w ON w.host_hash = h.host_hash
        WHERE h.host_hash IS NOT NULL
      )
    `
  }

  /**
   * A claim looks at the first waiting checks of each host only: as many as the host's allowance leaves. Two copies
   * claiming at once therefore contend for the same first checks of a host, and the one that finds them taken (SKIP
   * LOCKED, or rechecked once their claim commits) takes none of that host's others.
   * The hosts with waiting checks are found by skipping from one host to the next along the waiting checks' index, so
   * that a claim costs a few probes per host rather than a read of every waiting check.
   */
  const claimChecks = (request: ClaimRequest) => {
    const limit = Math.max(0, Math.floor(request.limit))
    const lowQuota = Math.min(limit, Math.max(0, Math.floor(request.lowPriorityQuota)))
    if (limit === 0) return Effect.succeed<ReadonlyArray<ClaimedCheck>>([])
    const now = timestamp(request.now)
    return rows("claimChecks", ClaimedRow, sql`
      WITH RECURSIVE waiting_hosts AS (
        (SELECT host_hash FROM linkcheck.checks WHERE completed_at IS NULL ORDER BY host_hash LIMIT 1)
        UNION ALL
        SELECT (
          SELECT k.host_hash FROM linkcheck.checks k
          WHERE k.completed_at IS NULL AND k.host_hash > w.host_hash
          ORDER BY k.host_hash LIMIT 1
        )
        FROM waiting_hosts w WHERE w.host_hash IS NOT NULL
      ),
      ${allowances(request, "waiting_hosts")},
      claimable AS (
        SELECT c.id, c.priority
        FROM allowances a
        CROSS JOIN LATERAL (
          SELECT k.id, k.priority FROM linkcheck.checks k
          WHERE k.host_hash = a.host_hash AND k.completed_at IS NULL
            AND (k.claimed_until IS NULL OR k.claimed_until < ${now}::timestamptz)
          ORDER BY k.priority DESC, k.id
          LIMIT a.allowance
        ) c
      ),
      allowed AS (
        SELECT id, priority, row_number() OVER (PARTITION BY priority ORDER BY id) AS rank_in_priority FROM claimable
      ),
      ranked AS (
        SELECT id, row_number() OVER (
          ORDER BY (priority = 0 AND rank_in_priority <= ${lowQuota}::integer) DESC, priority DESC, id
        ) AS claim_rank
        FROM allowed
      )
      UPDATE linkcheck.checks c
      SET claimed_by = ${request.workerId}, claimed_until = ${timestamp(request.claimUntil)}::timestamptz,
        claimed_at = ${now}::timestamptz, attempts = c.attempts + 1
      WHERE c.id IN (
        SELECT s.id FROM linkcheck.checks s
        WHERE s.id = ANY(ARRAY(SELECT id FROM ranked WHERE claim_rank <= ${limit}::integer))
          AND s.completed_at IS NULL AND (s.claimed_until IS NULL OR s.claimed_until < ${now}::timestamptz)
        FOR NO KEY UPDATE SKIP LOCKED
      )
      RETURNING c.id::text AS id, c.uri, c.host, c.priority, c.attempts, c.reads_anchors
    `).pipe(Effect.map((claimed) => claimed.map(claimedCheckOf).sort(byClaimOrder)))
  }

  /**
   * `insertChecks`, each new check claimed in the same statement if its host's allowance (counted along the pages'
   * order) and the request's limit leave room for it, and no other worker is alive: several copies share the work
   * out through their claims, which a copy that claimed as it wrote would get ahead of.
   */
  const insertClaimedChecks = (
    pages: ReadonlyArray<WantedPage>,
    priority: CheckPriority,
    now: Date,
    unlessCreatedSince: Date | null,
    claim: ClaimRequest
  ) =>
    sql`
      WITH wanted AS (
        SELECT n.uri, n.host, ${sha256("n.host")} AS host_hash, n.anchors, n.position
        FROM jsonb_to_recordset(${pagesJson(pages, true)}::jsonb)
          AS n(uri text, host text, anchors boolean, position integer)
        WHERE ${unlessReusable(unlessCreatedSince)}
      ),
      wanted_hosts AS (SELECT DISTINCT host_hash FROM wanted),
      ${allowances(claim, "wanted_hosts")},
      ranked AS (
        SELECT w.*, row_number() OVER (PARTITION BY w.host_hash ORDER BY w.position) <= a.allowance AS allowed
        FROM wanted w JOIN allowances a ON a.host_hash = w.host_hash
      ),
      chosen AS (
        SELECT r.*, r.allowed AND (SELECT workers FROM live) = 1
          AND row_number() OVER (PARTITION BY r.allowed ORDER BY r.position)
          <= ${Math.max(0, Math.floor(claim.limit))}::integer AS claimed
        FROM ranked r
      )
      INSERT INTO linkcheck.checks AS c (
        uri, uri_hash, host, host_hash, priority, created_at, reads_anchors, claimed_by, claimed_until, claimed_at,
        attempts
      )
      SELECT n.uri, ${sha256("n.uri")}, n.host, n.host_hash, ${storedPriority(priority)}::smallint,
        ${timestamp(now)}::timestamptz, n.anchors,
        CASE WHEN n.claimed THEN ${claim.workerId}::text END,
        CASE WHEN n.claimed THEN ${timestamp(claim.claimUntil)}::timestamptz END,
        CASE WHEN n.claimed THEN ${timestamp(now)}::timestamptz END,
        CASE WHEN n.claimed THEN 1 ELSE 0 END
      FROM chosen n
      ORDER BY n.position
      RETURNING c.id::text AS id, c.uri, c.host, c.priority, c.attempts, c.reads_anchors,
        c.claimed_by IS NOT NULL AS claimed
    `.pipe(
      Effect.flatMap(decodeRows(NewClaimedRow)),
      Effect.map((created) => ({
        created: created.map((row) => newCheckRecord(row, priority, now)),
        claimed: created.filter((row) => row.claimed).map(claimedCheckOf).sort(byClaimOrder)
      }))
    )

  const createAndClaimChecks = ({ claim, ...input }: Parameters<Store["createAndClaimChecks"]>[0]) =>
    insertClaimedChecks(distinctPages(input.pages), input.priority, input.now, input.reuseSince, claim).pipe(
      Effect.mapError(storeError("createAndClaimChecks"))
    )

  /** Locks in id order, so that statements touching many checks cannot deadlock each other. */
  const heldChecks = (workerId: string, ids: ReadonlyArray<string>) =>
    sql`
      SELECT h.id FROM linkcheck.checks h
      WHERE h.id IN (SELECT jsonb_array_elements_text(${JSON.stringify(ids.filter(isCheckId))}::jsonb)::bigint)
        AND h.claimed_by = ${workerId} AND h.completed_at IS NULL
      ORDER BY h.id
      FOR NO KEY UPDATE
    `

  const extendClaims = (workerId: string, ids: ReadonlyArray<string>, until: Date) =>
    sql`
      UPDATE linkcheck.checks SET claimed_until = ${timestamp(until)}::timestamptz
      WHERE id IN (${heldChecks(workerId, ids)})
    `.pipe(Effect.asVoid, Effect.mapError(storeError("extendClaims")))

  const releaseClaims = (workerId: string, ids: ReadonlyArray<string>) =>
    sql`
      UPDATE linkcheck.checks SET claimed_by = NULL, claimed_until = NULL, claimed_at = NULL, attempts = attempts - 1
      WHERE id IN (${heldChecks(workerId, ids)})
    `.pipe(Effect.asVoid, Effect.mapError(storeError("releaseClaims")))

  /**
   * Records the results of the checks the worker still holds; returns their ids. The results go in id order, the order
   * in which a batch being written locks the checks it reuses: updated along them (a nested loop, the plan for a few
   * hundred rows), the two wait for each other rather than deadlock.
   */
  const recordResults = (workerId: string, results: ReadonlyArray<CheckCompletion>, now: Date) => {
    const inIdOrder = results.filter(({ id }) => isCheckId(id)).sort((a, b) => Number(a.id) - Number(b.id))
    const updates = inIdOrder.map(({ anchors, id, result }) => ({
      id,
      status: result.status,
      errors: result.errors,
      warnings: result.warnings,
      danger: result.danger,
      problem_summary: result.problemSummary,
      suggested_fix: result.suggestedFix,
      report_after_uri: linkReportAfterUri(result, now),
      anchors: anchors ?? null
    }))
    return sql`
      UPDATE linkcheck.checks c
      SET completed_at = ${timestamp(now)}::timestamptz, status = r.status, errors = r.errors, warnings = r.warnings,
        danger = r.danger, problem_summary = r.problem_summary, suggested_fix = r.suggested_fix,
        claimed_by = NULL, claimed_until = NULL, claimed_at = NULL,
        link_report = '{"uri":' || to_json(c.uri)::text || ',' || r.report_after_uri, anchors = r.anchors
      FROM jsonb_to_recordset(${JSON.stringify(updates)}::jsonb) AS r(
        id bigint, status text, errors jsonb, warnings jsonb, danger jsonb, problem_summary text, suggested_fix text,
        report_after_uri text, anchors jsonb
      )
      WHERE c.id = r.id AND c.claimed_by = ${workerId} AND c.completed_at IS NULL
      RETURNING c.id::text AS id
    `.pipe(Effect.flatMap(decodeRows(IdRow)), Effect.map((recorded) => recorded.map((row) => row.id)))
  }

  const workload = (now: Date) =>
    rows("workload", WorkloadRow, sql`
      SELECT count(*)::integer AS pending,
        (count(*) FILTER (WHERE claimed_until >= ${timestamp(now)}::timestamptz))::integer AS claimed,
        min(claimed_at) FILTER (WHERE claimed_until >= ${timestamp(now)}::timestamptz) AS oldest_claim_at
      FROM linkcheck.checks WHERE completed_at IS NULL
    `).pipe(
      Effect.map(([row]) => ({
        pending: row?.pending ?? 0,
        claimed: row?.claimed ?? 0,
        oldestClaimAt: row?.oldest_claim_at ?? null
      }))
    )

  return {
    findCheck,
    createCheck,
    createChecks,
    createAndClaimChecks,
    insertChecks,
    insertClaimedChecks,
    lockReusableChecks,
    raiseToHighPriority,
    claimChecks,
    extendClaims,
    releaseClaims,
    recordResults,
    workload
  }
}
