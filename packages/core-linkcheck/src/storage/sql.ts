import { decodeRows } from "@civicstack/kit"
import { SqlClient, TransactionConnection } from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import type { Context } from "effect"
import { Effect, Layer, Option, Schema } from "effect"
import type { BatchRecord, CheckPriority, CheckRecord, ClaimedCheck, Webhook } from "../domain/check"
import { hostOf } from "../domain/check"
import { linkReportAfterUri } from "../wire"
import type { CheckCompletion, ClaimRequest, NewBatch, WebhookAttempt, WorkerHeartbeat } from "./LinkcheckStore"
import { LinkcheckStore, StoreError } from "./LinkcheckStore"

type Store = Context.Tag.Service<LinkcheckStore>

const Priority = Schema.transform(Schema.Literal(0, 1), Schema.Literal("low", "high"), {
  strict: true,
  decode: (stored) => (stored === 1 ? "high" as const : "low" as const),
  encode: (priority) => (priority === "high" ? 1 as const : 0 as const)
})
const storedPriority = Schema.encodeSync(Priority)

const Messages = Schema.NullOr(Schema.Array(Schema.String))

const CheckRow = Schema.Struct({
  id: Schema.String,
  uri: Schema.String,
  priority: Priority,
  created_at: Schema.DateFromSelf,
  completed_at: Schema.NullOr(Schema.DateFromSelf),
  status: Schema.NullOr(Schema.Literal("ok", "caution", "broken")),
  errors: Messages,
  warnings: Messages,
  danger: Messages,
  problem_summary: Schema.NullOr(Schema.String),
  suggested_fix: Schema.NullOr(Schema.String)
})
type CheckRow = typeof CheckRow.Type

const BatchRow = Schema.Struct({
  id: Schema.NumberFromString,
  created_at: Schema.DateFromSelf,
  completed_at: Schema.NullOr(Schema.DateFromSelf),
  webhook_uri: Schema.NullOr(Schema.String),
  webhook_secret_token: Schema.NullOr(Schema.String)
})

const ClaimedRow = Schema.Struct({
  id: Schema.String,
  uri: Schema.String,
  host: Schema.String,
  priority: Priority,
  attempts: Schema.Number
})

const WebhookAttemptRow = Schema.Struct({
  batch_id: Schema.NumberFromString,
  attempted_at: Schema.DateFromSelf,
  status_code: Schema.NullOr(Schema.Number),
  error: Schema.NullOr(Schema.String),
  final: Schema.Boolean
})

const WorkerRow = Schema.Struct({ id: Schema.String, pid: Schema.Number })

const WorkloadRow = Schema.Struct({
  pending: Schema.Number,
  claimed: Schema.Number,
  oldest_claim_at: Schema.NullOr(Schema.DateFromSelf)
})

const IdRow = Schema.Struct({ id: Schema.String })
const NewCheckRow = Schema.Struct({ id: Schema.String, uri: Schema.String })
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

const CHECK_COLUMNS = `c.id::text AS id, c.uri, c.priority, c.created_at, c.completed_at, c.status, c.errors,
  c.warnings, c.danger, c.problem_summary, c.suggested_fix`

const BATCH_COLUMNS = `b.id::text AS id, b.created_at, b.completed_at, b.webhook_uri, b.webhook_secret_token`

/** A check id that the database can compare with a bigint; any other string names no check. */
const isCheckId = (id: string) => /^[1-9]\d{0,17}$/.test(id)

const isBatchId = (id: number) => Number.isSafeInteger(id) && id > 0

const timestamp = (date: Date) => date.toISOString()

/**
 * Rows written by one statement of a batch at most. PGlite runs each statement on the server's thread, so a batch's
 * thousands of rows go in several statements, between which its first checks' requests can go out.
 */
const ROWS_PER_STATEMENT = 1000

/**
 * Checks are indexed by the SHA-256 of their uri and host, as a btree entry cannot hold a long text: this is the SQL
 * of that hash of a text column. Lookups by uri compare the uri too, so a collision cannot find another uri's check.
 */
const sha256Of = (column: string) => `sha256(convert_to(${column}, 'UTF8'))`

const checkRecordOf = (row: CheckRow): CheckRecord => ({
  id: row.id,
  uri: row.uri,
  priority: row.priority,
  createdAt: row.created_at,
  completedAt: row.completed_at,
  result: row.status === null ? null : {
    status: row.status,
    errors: row.errors ?? [],
    warnings: row.warnings ?? [],
    danger: row.danger ?? [],
    problemSummary: row.problem_summary,
    suggestedFix: row.suggested_fix
  }
})

const webhookOf = (uri: string | null, secretToken: string | null): Webhook | null =>
  uri === null ? null : { uri, secretToken }

const latestCompletion = (checks: ReadonlyArray<CheckRecord>): Date | null =>
  checks.reduce<Date | null>(
    (latest, check) =>
      check.completedAt !== null && (latest === null || check.completedAt > latest) ? check.completedAt : latest,
    null
  )

/** Keeps the failures of the caller's own effect apart from those of BEGIN, COMMIT and ROLLBACK. */
class CallerFailure<E> {
  constructor(readonly error: E) {}
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient
  const checkColumns = sql.literal(CHECK_COLUMNS)
  const batchColumns = sql.literal(BATCH_COLUMNS)
  const sha256 = (column: string) => sql.literal(sha256Of(column))
  const sha256Param = (text: string) => sql`sha256(convert_to(${text}::text, 'UTF8'))`

  const storeFailure = (operation: string) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.mapError(effect, (cause) => new StoreError({ message: `linkcheck store: ${operation} failed`, cause }))

  /**
   * The library turns a COMMIT or ROLLBACK that fails (the connection was lost in the middle of the transaction)
   * into a defect; here it is the failure it is, so that callers try again instead of dying.
   */
  const inTransaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError, R> =>
    sql.withTransaction(effect).pipe(
      Effect.catchAllDefect((defect) => defect instanceof SqlError ? Effect.fail(defect) : Effect.die(defect))
    )

  /** In a transaction of its own, or in the caller's without a savepoint: one round trip less each way. */
  const atomically = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.flatMap(
      Effect.serviceOption(TransactionConnection),
      (caller) => Option.isSome(caller) ? effect : inTransaction(effect)
    )

  const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | StoreError, R> =>
    inTransaction(Effect.mapError(effect, (error) => new CallerFailure(error))).pipe(
      Effect.mapError((failure): E | StoreError =>
        failure instanceof CallerFailure
          ? failure.error
          : new StoreError({ message: "linkcheck store: transaction failed", cause: failure })
      )
    )

  const findCheck = (uri: string, options: { readonly since: Date; readonly completedOnly: boolean }) =>
    sql`
      SELECT ${checkColumns} FROM linkcheck.checks c
      WHERE c.uri_hash = ${sha256Param(uri)} AND c.uri = ${uri}::text
        AND c.created_at >= ${timestamp(options.since)}::timestamptz
      ${sql.literal(options.completedOnly ? "AND c.completed_at IS NOT NULL" : "")}
      ORDER BY c.created_at DESC, c.id DESC
      LIMIT 1
    `.pipe(
      Effect.flatMap(decodeRows(CheckRow)),
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), checkRecordOf)),
      storeFailure("findCheck")
    )

  const createCheck = (input: Parameters<Store["createCheck"]>[0]) =>
    sql`
      INSERT INTO linkcheck.checks AS c (
        uri, uri_hash, host, host_hash, priority, created_at, claimed_by, claimed_until, claimed_at, attempts
      )
      SELECT
        n.uri, ${sha256("n.uri")}, n.host, ${sha256("n.host")}, ${storedPriority(input.priority)}::smallint,
        ${timestamp(input.now)}::timestamptz, ${input.claim?.workerId ?? null}::text,
        ${input.claim ? timestamp(input.claim.until) : null}::timestamptz,
        ${input.claim ? timestamp(input.now) : null}::timestamptz, ${input.claim ? 1 : 0}::integer
      FROM (SELECT ${input.uri}::text AS uri, ${hostOf(input.uri)}::text AS host) n
      RETURNING ${checkColumns}
    `.pipe(
      Effect.flatMap(decodeRows(CheckRow)),
      Effect.map((rows) => checkRecordOf(rows[0]!)),
      storeFailure("createCheck")
    )

  /** Locks the checks it returns, so that none completes or disappears before the batch is written. */
  const lockReusableChecks = (uris: ReadonlyArray<string>, since: Date) =>
    sql`
      SELECT ${checkColumns} FROM linkcheck.checks c
      WHERE c.id IN (
        SELECT DISTINCT ON (r.uri) r.id
        FROM jsonb_array_elements_text(${JSON.stringify(uris)}::jsonb) AS wanted(uri)
        JOIN linkcheck.checks r ON r.uri_hash = ${sha256("wanted.uri")} AND r.uri = wanted.uri
        WHERE r.created_at >= ${timestamp(since)}::timestamptz
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
   * New checks of `uris`, but none of a uri that has a check created at or after `unlessCreatedSince`. Only the new
   * ids come back: the rest of each new check is known here, and a batch can add 5000 of them.
   */
  const insertChecks = (
    uris: ReadonlyArray<string>,
    priority: CheckPriority,
    now: Date,
    unlessCreatedSince: Date | null = null
  ) =>
    sql`
      INSERT INTO linkcheck.checks AS c (uri, uri_hash, host, host_hash, priority, created_at)
      SELECT n.uri, ${sha256("n.uri")}, n.host, ${sha256("n.host")}, ${storedPriority(priority)}::smallint,
        ${timestamp(now)}::timestamptz
      FROM jsonb_to_recordset(${JSON.stringify(uris.map((uri) => ({ uri, host: hostOf(uri) })))}::jsonb)
        AS n(uri text, host text)
      WHERE ${unlessCreatedSince === null}::boolean OR NOT EXISTS (
        SELECT 1 FROM linkcheck.checks r
        WHERE r.uri_hash = ${sha256("n.uri")} AND r.uri = n.uri
          AND r.created_at >= ${unlessCreatedSince === null ? null : timestamp(unlessCreatedSince)}::timestamptz
      )
      RETURNING c.id::text AS id, c.uri
    `.pipe(
      Effect.flatMap(decodeRows(NewCheckRow)),
      Effect.map((rows) =>
        rows.map(({ id, uri }): CheckRecord => ({ id, uri, priority, createdAt: now, completedAt: null, result: null }))
      )
    )

  const insertBatch = (batch: NewBatch, pendingLinks: number, completedAt: Date | null) =>
    sql`
      INSERT INTO linkcheck.batches AS b (created_at, completed_at, webhook_uri, webhook_secret_token, pending_links)
      VALUES (
        ${timestamp(batch.now)}::timestamptz, ${completedAt === null ? null : timestamp(completedAt)}::timestamptz,
        ${batch.webhook?.uri ?? null}::text, ${batch.webhook?.secretToken ?? null}::text, ${pendingLinks}::integer
      )
      RETURNING ${batchColumns}
    `.pipe(Effect.flatMap(decodeRows(BatchRow)), Effect.map((rows) => rows[0]!))

  const insertBatchLinks = (batchId: number, firstPosition: number, checkIds: ReadonlyArray<string>) =>
    sql`
      INSERT INTO linkcheck.batch_links (batch_id, position, check_id)
      SELECT ${batchId}::bigint, ${firstPosition}::integer + l.position - 1, l.check_id::bigint
      FROM jsonb_array_elements_text(${JSON.stringify(checkIds)}::jsonb) WITH ORDINALITY AS l(check_id, position)
    `

  const createChecks = (input: Parameters<Store["createChecks"]>[0]) => {
    const uris = [...new Set(input.uris)]
    return uris.length === 0
      ? Effect.succeed([])
      : insertChecks(uris, input.priority, input.now, input.reuseSince).pipe(storeFailure("createChecks"))
  }

  const createBatch = (batch: NewBatch) =>
    inTransaction(Effect.gen(function*() {
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
        checks
      } satisfies BatchRecord
    })).pipe(storeFailure("createBatch"))

  const findBatch = (id: number) =>
    Effect.gen(function*() {
      if (!isBatchId(id)) return Option.none()
      const [batch] = yield* sql`SELECT ${batchColumns} FROM linkcheck.batches b WHERE b.id = ${id}::bigint`.pipe(
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
        checks: checks.map(checkRecordOf)
      })
    }).pipe(storeFailure("findBatch"))

  /** The report is built as `toBatch` and `batchToWire` build it; the shared storage suite compares the two. */
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
    }).pipe(storeFailure("findWebhookReport"))

  /**
   * A claim looks at the first waiting checks of each host only: as many as the host's allowance (see `ClaimRequest`)
   * leaves. Two copies claiming at once therefore contend for the same first checks of a host, and the one that finds
   * them taken (SKIP LOCKED, or rechecked once their claim commits) takes none of that host's others.
   * Hosts are told apart by their hash alone: a collision would only make two hosts share one limit.
   * The hosts with waiting checks are found by skipping from one host to the next along the waiting checks' index, so
   * that a claim costs a few probes per host rather than a read of every waiting check.
   */
  const claimChecks = (request: ClaimRequest) => {
    const limit = Math.max(0, Math.floor(request.limit))
    const lowQuota = Math.min(limit, Math.max(0, Math.floor(request.lowPriorityQuota)))
    if (limit === 0) return Effect.succeed<ReadonlyArray<ClaimedCheck>>([])
    const now = timestamp(request.now)
    const perHost = Math.floor(request.perHost)
    const ahead = Math.max(0, Math.floor(request.aheadPerHost))
    return sql`
      WITH RECURSIVE live AS (
        SELECT greatest(count(*), 1)::integer AS workers FROM linkcheck.workers
        WHERE heartbeat_at >= ${timestamp(request.workersAliveSince)}::timestamptz
      ),
      limits AS (
        SELECT CASE WHEN workers > 1 THEN 0 ELSE ${ahead}::integer END AS ahead,
          (${perHost}::integer + workers - 1) / workers AS share
        FROM live
      ),
      waiting_hosts AS (
        (SELECT host_hash FROM linkcheck.checks WHERE completed_at IS NULL ORDER BY host_hash LIMIT 1)
        UNION ALL
        SELECT (
          SELECT k.host_hash FROM linkcheck.checks k
          WHERE k.completed_at IS NULL AND k.host_hash > w.host_hash
          ORDER BY k.host_hash LIMIT 1
        )
        FROM waiting_hosts w WHERE w.host_hash IS NOT NULL
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
        FROM waiting_hosts h
        CROSS JOIN limits m
        LEFT JOIN held_by_others o ON o.host_hash = h.host_hash
        LEFT JOIN held_by_worker w ON w.host_hash = h.host_hash
        WHERE h.host_hash IS NOT NULL
      ),
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
      RETURNING c.id::text AS id, c.uri, c.host, c.priority, c.attempts
    `.pipe(
      Effect.flatMap(decodeRows(ClaimedRow)),
      Effect.map((rows) =>
        [...rows].sort((a, b) =>
          a.priority === b.priority ? Number(a.id) - Number(b.id) : a.priority === "high" ? -1 : 1
        )
      ),
      storeFailure("claimChecks")
    )
  }

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
    `.pipe(Effect.asVoid, storeFailure("extendClaims"))

  const releaseClaims = (workerId: string, ids: ReadonlyArray<string>) =>
    sql`
      UPDATE linkcheck.checks SET claimed_by = NULL, claimed_until = NULL, claimed_at = NULL, attempts = attempts - 1
      WHERE id IN (${heldChecks(workerId, ids)})
    `.pipe(Effect.asVoid, storeFailure("releaseClaims"))

  /** Records the results of the checks the worker still holds; returns their ids. */
  const recordResults = (workerId: string, results: ReadonlyArray<CheckCompletion>, now: Date) => {
    const rows = results.filter(({ id }) => isCheckId(id)).map(({ id, result }) => ({
      id,
      status: result.status,
      errors: result.errors,
      warnings: result.warnings,
      danger: result.danger,
      problem_summary: result.problemSummary,
      suggested_fix: result.suggestedFix,
      report_after_uri: linkReportAfterUri(result, now)
    }))
    return sql`
      UPDATE linkcheck.checks c
      SET completed_at = ${timestamp(now)}::timestamptz, status = r.status, errors = r.errors, warnings = r.warnings,
        danger = r.danger, problem_summary = r.problem_summary, suggested_fix = r.suggested_fix,
        claimed_by = NULL, claimed_until = NULL, claimed_at = NULL,
        link_report = '{"uri":' || to_json(c.uri)::text || ',' || r.report_after_uri
      FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS r(
        id bigint, status text, errors jsonb, warnings jsonb, danger jsonb, problem_summary text, suggested_fix text,
        report_after_uri text
      )
      WHERE c.id = r.id AND c.claimed_by = ${workerId} AND c.completed_at IS NULL
      RETURNING c.id::text AS id
    `.pipe(Effect.flatMap(decodeRows(IdRow)), Effect.map((recorded) => recorded.map((row) => row.id)))
  }

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
          .map((row) => ({ id: row.id, webhook: webhookOf(row.webhook_uri, row.webhook_secret_token) }))
          .sort((a, b) => a.id - b.id)
      )
    )
  }

  const completeChecks = (input: Parameters<Store["completeChecks"]>[0]) =>
    atomically(Effect.gen(function*() {
      const recorded = yield* recordResults(input.workerId, input.results, input.now)
      if (recorded.length === 0) return { recorded, completedBatches: [] }
      return { recorded, completedBatches: yield* countDownBatches(recorded, input.now) }
    })).pipe(storeFailure("completeChecks"))

  const recordWebhookAttempt = (attempt: WebhookAttempt) =>
    sql`
      INSERT INTO linkcheck.webhook_attempts (batch_id, attempted_at, status_code, error, final)
      VALUES (
        ${attempt.batchId}::bigint, ${timestamp(attempt.attemptedAt)}::timestamptz,
        ${attempt.statusCode}::integer, ${attempt.error}::text, ${attempt.final}
      )
    `.pipe(Effect.asVoid, storeFailure("recordWebhookAttempt"))

  const webhookAttempts = (batchId: number) =>
    isBatchId(batchId)
      ? sql`
        SELECT batch_id::text AS batch_id, attempted_at, status_code, error, final FROM linkcheck.webhook_attempts
        WHERE batch_id = ${batchId}::bigint
        ORDER BY attempted_at, id
      `.pipe(
        Effect.flatMap(decodeRows(WebhookAttemptRow)),
        Effect.map((rows) =>
          rows.map((row): WebhookAttempt => ({
            batchId: row.batch_id,
            attemptedAt: row.attempted_at,
            statusCode: row.status_code,
            error: row.error,
            final: row.final
          }))
        ),
        storeFailure("webhookAttempts")
      )
      : Effect.succeed([])

  /** Workers silent for a day are forgotten, so the table stays as small as the fleet. */
  const heartbeat = (beat: WorkerHeartbeat) =>
    atomically(Effect.gen(function*() {
      yield* sql`
        INSERT INTO linkcheck.workers (id, hostname, pid, heartbeat_at)
        VALUES (${beat.workerId}, ${beat.hostname}, ${beat.pid}::integer, ${timestamp(beat.now)}::timestamptz)
        ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at
      `
      yield* sql`
        DELETE FROM linkcheck.workers
        WHERE heartbeat_at < ${timestamp(new Date(beat.now.getTime() - 86_400_000))}::timestamptz
      `
      const holding = JSON.stringify(beat.holding.filter(isCheckId))
      yield* sql`
        UPDATE linkcheck.checks c
        SET claimed_until = CASE WHEN h.held THEN ${timestamp(beat.claimUntil)}::timestamptz END,
          claimed_by = CASE WHEN h.held THEN c.claimed_by END,
          claimed_at = CASE WHEN h.held THEN c.claimed_at END
        FROM (
          SELECT id, id IN (SELECT jsonb_array_elements_text(${holding}::jsonb)::bigint) AS held
          FROM linkcheck.checks
          WHERE claimed_by = ${beat.workerId} AND completed_at IS NULL
          ORDER BY id FOR NO KEY UPDATE
        ) h
        WHERE c.id = h.id
      `
    })).pipe(storeFailure("heartbeat"))

  const workersOn = (hostname: string) =>
    sql`SELECT id, pid FROM linkcheck.workers WHERE hostname = ${hostname}`.pipe(
      Effect.flatMap(decodeRows(WorkerRow)),
      storeFailure("workersOn")
    )

  const retireWorkers = (workerIds: ReadonlyArray<string>) => {
    const ids = JSON.stringify(workerIds)
    return atomically(Effect.gen(function*() {
      yield* sql`
        UPDATE linkcheck.checks SET claimed_by = NULL, claimed_until = NULL, claimed_at = NULL
        WHERE id IN (
          SELECT id FROM linkcheck.checks
          WHERE claimed_by IN (SELECT jsonb_array_elements_text(${ids}::jsonb)) AND completed_at IS NULL
          ORDER BY id FOR NO KEY UPDATE
        )
      `
      yield* sql`DELETE FROM linkcheck.workers WHERE id IN (SELECT jsonb_array_elements_text(${ids}::jsonb))`
    })).pipe(storeFailure("retireWorkers"))
  }

  const workload = (now: Date) =>
    sql`
      SELECT count(*)::integer AS pending,
        (count(*) FILTER (WHERE claimed_until >= ${timestamp(now)}::timestamptz))::integer AS claimed,
        min(claimed_at) FILTER (WHERE claimed_until >= ${timestamp(now)}::timestamptz) AS oldest_claim_at
      FROM linkcheck.checks WHERE completed_at IS NULL
    `.pipe(
      Effect.flatMap(decodeRows(WorkloadRow)),
      Effect.map(([row]) => ({
        pending: row?.pending ?? 0,
        claimed: row?.claimed ?? 0,
        oldestClaimAt: row?.oldest_claim_at ?? null
      })),
      storeFailure("workload")
    )

  const countDeleted = (statement: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
    statement.pipe(Effect.flatMap(decodeRows(CountRow)), Effect.map((rows) => rows[0]?.count ?? 0))

  const deleteCompletedBefore = (before: Date) => {
    const cutoff = timestamp(before)
    return inTransaction(Effect.gen(function*() {
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
    })).pipe(storeFailure("deleteCompletedBefore"))
  }

  return LinkcheckStore.of({
    transaction,
    findCheck,
    createCheck,
    createChecks,
    createBatch,
    findBatch,
    findWebhookReport,
    claimChecks,
    extendClaims,
    releaseClaims,
    completeChecks,
    recordWebhookAttempt,
    webhookAttempts,
    heartbeat,
    workersOn,
    retireWorkers,
    workload,
    deleteCompletedBefore
  })
})

/** The store over the host's `SqlClient` (PostgreSQL or PGlite); run `migrate` first. */
export const layerSql: Layer.Layer<LinkcheckStore, never, SqlClient> = Layer.effect(LinkcheckStore, make)
