import { SqlClient, TransactionConnection } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Deferred, Duration, Effect, Exit, Layer, Option, ParseResult, PubSub, Queue, Schedule, Schema, Stream } from "effect"
import { newClaimToken } from "./claimToken"
import { decodeRows } from "@civicstack/kit"
import type { JobDefinition } from "./definition"
import type { PreparedJob } from "./prepare"
import { prepareJobs } from "./prepare"
import { JobQueueError } from "./errors"
import type { Enqueued, JobClaim } from "./JobQueue"
import { enqueueOneWith, JobQueue, QueueStats } from "./JobQueue"
import { LEASE_EXPIRED_ERROR } from "./leases"

/** The LISTEN/NOTIFY channel; the payload of each notification is a queue name. */
export const NOTIFY_CHANNEL = "civicstack_jobs"

export interface SqlLayerOptions {
  /** E.g. `PgClient.listen`: lets workers wake as soon as any copy enqueues, instead of at their next poll. */
  readonly listen?: (channel: string) => Stream.Stream<string, unknown>
}

const EnqueuedRow = Schema.Struct({ position: Schema.Number, id: Schema.NullOr(Schema.String), deduplicated: Schema.Boolean })
const ClaimedRow = Schema.Struct({
  id: Schema.String,
  payload: Schema.Unknown,
  attempts: Schema.Number,
  max_attempts: Schema.Number,
  priority: Schema.Number,
  trace_parent: Schema.NullOr(Schema.String)
})
const StateRow = Schema.Struct({ state: Schema.Literal("queued", "dead") })
const CountRow = Schema.Struct({ count: Schema.Number })
const DeadRow = Schema.Struct({
  id: Schema.String,
  queue: Schema.String,
  payload: Schema.Unknown,
  attempts: Schema.Number,
  max_attempts: Schema.Number,
  last_error: Schema.NullOr(Schema.String),
  failed_at_ms: Schema.Number
})

const FiredRow = Schema.Struct({ name: Schema.String })

const decodeEnqueued = decodeRows(EnqueuedRow)
const decodeClaimed = decodeRows(ClaimedRow)
const decodeState = decodeRows(StateRow)
const decodeCount = decodeRows(CountRow)
const decodeStats = decodeRows(QueueStats)
const decodeDead = decodeRows(DeadRow)
const decodeFired = decodeRows(FiredRow)

/** Enqueue attempts before giving up on a dedupe key that keeps changing hands between statements. */
const ENQUEUE_RACE_RETRIES = 5

/** Jobs of several enqueue calls written by one statement at most; a single call with more is written alone. */
const MAX_JOBS_TOGETHER = 1000

interface WaitingWrite {
  readonly queue: string
  readonly jobs: ReadonlyArray<PreparedJob>
  readonly now: number
  readonly done: Deferred.Deferred<ReadonlyArray<Enqueued>, JobQueueError>
}

/** Writes of one queue each, in arrival order, of at most `MAX_JOBS_TOGETHER` jobs unless a single write has more. */
const statementsFor = (writes: ReadonlyArray<WaitingWrite>): ReadonlyArray<ReadonlyArray<WaitingWrite>> => {
  const open = new Map<string, { writes: Array<WaitingWrite>; jobs: number }>()
  const statements: Array<Array<WaitingWrite>> = []
  for (const write of writes) {
    const current = open.get(write.queue)
    if (current !== undefined && current.jobs + write.jobs.length <= MAX_JOBS_TOGETHER) {
      current.writes.push(write)
      current.jobs += write.jobs.length
    } else {
      const started = { writes: [write], jobs: write.jobs.length }
      statements.push(started.writes)
      open.set(write.queue, started)
    }
  }
  return statements
}

const toIso = (millis: number) => new Date(millis).toISOString()

/** Built by hand so that each payload, already JSON text, is not parsed and serialised again. */
const itemsJson = (jobs: ReadonlyArray<PreparedJob>) =>
  `[${
    jobs.map((job, position) =>
      `{"position":${position},"payload":${job.payloadJson},"priority":${job.priority},"run_at":"${
        toIso(job.runAt)
      }","dedupe_key":${JSON.stringify(job.dedupeKey)},"max_attempts":${job.maxAttempts},"trace_parent":${
        JSON.stringify(job.traceParent)
      }}`
    ).join(",")
  }]`

const claimsJson = (claims: ReadonlyArray<JobClaim>) =>
  JSON.stringify(claims.map((claim) => ({ id: claim.id, token: claim.claimToken })))

/**
 * For a caller that writes a row and the job about it in one statement, one round trip, without a transaction: a CTE
 * named `enqueued_jobs` that enqueues one job of `definition` with `payload` for each row of the caller's earlier
 * CTE `source` (none when it has no row), to follow the caller's own CTEs after a comma. Workers of every copy are
 * woken at commit (`NOTIFY`), as by an enqueue in a transaction. Only for a queue that is `layerSql` on the same
 * database; the caller names nothing of the jobs table but this CTE.
 */
export const enqueueForEachRow = <A, I>(
  definition: JobDefinition<A, I>,
  payload: A,
  source: string
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const [job] = yield* prepareJobs(definition, [{ payload }])
    const now = yield* Clock.currentTimeMillis
    // pg_notify in a filter runs once per statement; as a target of an unused column it might not run at all
    return sql`enqueued_jobs AS (
      INSERT INTO jobs.jobs (queue, payload, state, priority, run_at, max_attempts, created_at, trace_parent)
      SELECT ${definition.queue}, ${job!.payloadJson}::jsonb, 'queued', ${job!.priority}, ${toIso(job!.runAt)}::timestamptz,
        ${job!.maxAttempts}, ${toIso(now)}::timestamptz, ${job!.traceParent}
      FROM ${sql(source)}
      WHERE pg_notify(${NOTIFY_CHANNEL}, ${definition.queue})::text = ''
      RETURNING id
    )`
  })

export const layerSql = (options: SqlLayerOptions = {}): Layer.Layer<JobQueue, never, SqlClient> =>
  Layer.scoped(
    JobQueue,
    Effect.gen(function*() {
      const sql = yield* SqlClient
      const enqueuedQueues = yield* PubSub.unbounded<string>()

      const run = <A>(
        what: string,
        decodeRows: (rows: unknown) => Effect.Effect<ReadonlyArray<A>, ParseResult.ParseError>,
        statement: Effect.Effect<ReadonlyArray<unknown>, SqlError>
      ): Effect.Effect<ReadonlyArray<A>, JobQueueError> =>
        statement.pipe(
          Effect.flatMap(decodeRows),
          Effect.mapError((cause) =>
            new JobQueueError({
              message: ParseResult.isParseError(cause)
                ? `Unexpected result from the database while trying to ${what}: ${cause.message}`
                : `Could not ${what}: ${cause.message}`,
              cause
            })
          )
        )

      const execute = (what: string, statement: Effect.Effect<unknown, SqlError>): Effect.Effect<void, JobQueueError> =>
        statement.pipe(
          Effect.asVoid,
          Effect.mapError((cause) => new JobQueueError({ message: `Could not ${what}: ${cause.message}`, cause }))
        )

      const deleteCompleted = (claims: ReadonlyArray<JobClaim>) =>
        sql`
          DELETE FROM jobs.jobs AS job
          USING jsonb_to_recordset(${claimsJson(claims)}::jsonb) AS done(id bigint, token text)
          WHERE job.id = done.id AND job.claim_token = done.token
        `

      /**
       * Inside the caller's transaction the notification must ride on it, to be delivered at its commit. Outside one
       * it is sent afterwards, coalesced (see `notifyLater`): PostgreSQL serialises the commits of notifying
       * transactions, so notifying in every insert would let only one enqueue commit at a time.
       */
      const notifyInStatement = (queue: string, inTransaction: boolean) =>
        inTransaction ? sql`, notified AS (SELECT pg_notify(${NOTIFY_CHANNEL}, ${queue}))` : sql``
      const notifiedJoin = (inTransaction: boolean) => inTransaction ? sql`CROSS JOIN notified` : sql``

      /** The usual `enqueue`: one job, no dedupe key; the cheapest statement for the server to plan. */
      const insertOne = (queue: string, job: PreparedJob, now: number, inTransaction: boolean) =>
        sql`
          WITH inserted AS (
            INSERT INTO jobs.jobs (queue, payload, state, priority, run_at, max_attempts, created_at, trace_parent)
            VALUES (${queue}, ${job.payloadJson}::jsonb, 'queued', ${job.priority}, ${toIso(job.runAt)}::timestamptz,
              ${job.maxAttempts}, ${toIso(now)}::timestamptz, ${job.traceParent})
            RETURNING id
          )
          ${notifyInStatement(queue, inTransaction)}
          SELECT 0 AS position, inserted.id::text AS id, false AS deduplicated FROM inserted ${notifiedJoin(inTransaction)}
        `.withoutTransform

      /** Without dedupe keys every item is inserted, so a much simpler statement (cheaper to plan) does. */
      const insertWithoutDedupe = (queue: string, jobs: ReadonlyArray<PreparedJob>, now: number, inTransaction: boolean) =>
        jobs.length === 1 ? insertOne(queue, jobs[0]!, now, inTransaction) : sql`
          WITH input AS MATERIALIZED (
            SELECT nextval('jobs.jobs_id_seq') AS id, item.*
            FROM jsonb_to_recordset(${itemsJson(jobs)}::jsonb)
              AS item(position integer, payload jsonb, priority integer, run_at timestamptz, max_attempts integer,
                trace_parent text)
          ),
          inserted AS (
            INSERT INTO jobs.jobs (id, queue, payload, state, priority, run_at, max_attempts, created_at, trace_parent)
            SELECT id, ${queue}, payload, 'queued', priority, run_at, max_attempts, ${toIso(now)}::timestamptz, trace_parent
            FROM input
          )
          ${notifyInStatement(queue, inTransaction)}
          SELECT input.position, input.id::text AS id, false AS deduplicated FROM input ${notifiedJoin(inTransaction)}
        `.withoutTransform

      /** Rows whose duplicate was not visible to this statement come back without an id. */
      const insertWithDedupe = (queue: string, jobs: ReadonlyArray<PreparedJob>, now: number, inTransaction: boolean) =>
        sql`
          WITH input AS MATERIALIZED (
            SELECT nextval('jobs.jobs_id_seq') AS id, item.*
            FROM jsonb_to_recordset(${itemsJson(jobs)}::jsonb)
              AS item(position integer, payload jsonb, priority integer, run_at timestamptz, dedupe_key text, max_attempts integer,
                trace_parent text)
          ),
          inserted AS (
            INSERT INTO jobs.jobs (id, queue, payload, state, priority, run_at, max_attempts, dedupe_key, created_at, trace_parent)
            SELECT id, ${queue}, payload, 'queued', priority, run_at, max_attempts, dedupe_key, ${toIso(now)}::timestamptz,
              trace_parent
            FROM input ORDER BY position
            ON CONFLICT (queue, dedupe_key) WHERE dedupe_key IS NOT NULL AND state <> 'dead' DO NOTHING
            RETURNING id, dedupe_key
          )
          ${notifyInStatement(queue, inTransaction)}
          SELECT input.position,
            coalesce(mine.id, sibling.id, existing.id)::text AS id,
            mine.id IS NULL AS deduplicated
          FROM input
          ${notifiedJoin(inTransaction)}
          LEFT JOIN inserted mine ON mine.id = input.id
          LEFT JOIN inserted sibling ON mine.id IS NULL AND sibling.dedupe_key = input.dedupe_key
          LEFT JOIN jobs.jobs existing ON mine.id IS NULL AND sibling.id IS NULL
            AND existing.queue = ${queue} AND existing.dedupe_key = input.dedupe_key AND existing.state <> 'dead'
        `.withoutTransform

      const insert = (queue: string, jobs: ReadonlyArray<PreparedJob>, now: number, inTransaction: boolean) =>
        run(
          `enqueue jobs on queue "${queue}"`,
          decodeEnqueued,
          jobs.some((job) => job.dedupeKey !== null)
            ? insertWithDedupe(queue, jobs, now, inTransaction)
            : insertWithoutDedupe(queue, jobs, now, inTransaction)
        )

      /**
       * A duplicate that committed after this statement's snapshot, or completed meanwhile, leaves its row
       * without an id; those items are enqueued again.
       */
      const insertAll = (
        queue: string,
        jobs: ReadonlyArray<PreparedJob>,
        now: number,
        inTransaction: boolean,
        retriesLeft: number
      ): Effect.Effect<ReadonlyArray<Enqueued>, JobQueueError> =>
        Effect.gen(function*() {
          const rows = yield* insert(queue, jobs, now, inTransaction)
          const results: Array<Enqueued | undefined> = jobs.map(() => undefined)
          const unresolved: Array<number> = []
          for (const row of rows) {
            if (row.id === null) unresolved.push(row.position)
            else results[row.position] = { id: row.id, deduplicated: row.deduplicated }
          }
          if (unresolved.length > 0) {
            if (retriesLeft === 0) {
              return yield* new JobQueueError({
                message: `Could not enqueue on queue "${queue}": the dedupe key kept changing hands`
              })
            }
            const retried = yield* insertAll(
              queue,
              unresolved.map((position) => jobs[position]!),
              now,
              inTransaction,
              retriesLeft - 1
            )
            unresolved.forEach((position, index) => {
              results[position] = retried[index]
            })
          }
          return results.map((result) => result!)
        })

      /** Queues enqueued on since the last notification was sent; one statement notifies them all. */
      const unnotifiedQueues = new Set<string>()
      const notificationWanted = yield* Queue.sliding<void>(1)
      const notifyLater = (queue: string) =>
        Effect.suspend(() => {
          unnotifiedQueues.add(queue)
          return Queue.offer(notificationWanted, undefined)
        })
      yield* Queue.take(notificationWanted).pipe(
        Effect.zipRight(Effect.suspend(() => {
          const queues = [...unnotifiedQueues]
          unnotifiedQueues.clear()
          return execute(
            "notify other copies of new jobs",
            sql`SELECT ${sql.csv(queues.map((queue) => sql`pg_notify(${NOTIFY_CHANNEL}, ${queue})`))}`
          )
        })),
        // other copies still poll, so a lost notification only delays work
        Effect.catchAll((error) => Effect.logWarning("Could not notify other copies of new jobs", error)),
        Effect.forever,
        Effect.forkScoped
      )

      /**
       * Enqueues outside a transaction that arrive while a write is in flight are written together by the next one, so
       * callers that enqueue one job at a time, concurrently, share round trips and commits.
       */
      const waitingWrites = yield* Queue.unbounded<WaitingWrite>()

      const publishEnqueued = (queue: string) =>
        notifyLater(queue).pipe(Effect.zipRight(PubSub.publish(enqueuedQueues, queue)))

      const writeTogether = (writes: ReadonlyArray<WaitingWrite>) =>
        Effect.forEach(statementsFor(writes), (group) =>
          Effect.gen(function*() {
            const queue = group[0]!.queue
            const all = group.flatMap((write) => write.jobs)
            const now = Math.min(...group.map((write) => write.now))
            const enqueued = yield* Effect.exit(insertAll(queue, all, now, false, ENQUEUE_RACE_RETRIES))
            let offset = 0
            for (const write of group) {
              const from = offset
              offset += write.jobs.length
              yield* Deferred.done(write.done, Exit.map(enqueued, (results) => results.slice(from, offset)))
            }
            if (Exit.isSuccess(enqueued)) yield* publishEnqueued(queue)
          }), { discard: true })

      yield* Queue.take(waitingWrites).pipe(
        Effect.flatMap((first) => Effect.map(Queue.takeAll(waitingWrites), (more) => [first, ...more])),
        Effect.flatMap((writes) => Effect.uninterruptible(writeTogether(writes))),
        Effect.forever,
        Effect.onInterrupt(() =>
          Effect.flatMap(Queue.takeAll(waitingWrites), (writes) =>
            Effect.forEach(writes, (write) =>
              Deferred.fail(write.done, new JobQueueError({ message: "The job queue was closed before this enqueue" })))
          )
        ),
        Effect.forkScoped
      )

      const enqueueMany: JobQueue["Type"]["enqueueMany"] = (definition, items) =>
        Effect.gen(function*() {
          if (items.length === 0) return []
          const jobs = yield* prepareJobs(definition, items)
          const now = yield* Clock.currentTimeMillis
          const queue = definition.queue
          if (Option.isNone(yield* Effect.serviceOption(TransactionConnection))) {
            const done = yield* Deferred.make<ReadonlyArray<Enqueued>, JobQueueError>()
            yield* Queue.offer(waitingWrites, { queue, jobs, now, done })
            return yield* Deferred.await(done)
          }
          const enqueued = yield* insertAll(queue, jobs, now, true, ENQUEUE_RACE_RETRIES)
          // The job is invisible until the caller commits, so a worker of this copy woken now claims nothing: one
          // statement lost per enqueue. When listening, the commit's notification wakes this copy's workers too;
          // otherwise they are woken now, in case the commit comes before their claim, and poll
          if (options.listen === undefined) yield* PubSub.publish(enqueuedQueues, queue)
          return enqueued
        })

      const layerScope = yield* Effect.scope
      const listen = options.listen
      /** Started by the first `wakeups` subscriber, so that a copy that only enqueues does not receive every notification. */
      const startListening = yield* Effect.once(
        listen === undefined ? Effect.void : listen(NOTIFY_CHANNEL).pipe(
          Stream.runForEach((queue) => PubSub.publish(enqueuedQueues, queue)),
          Effect.catchAllCause((cause) =>
            Effect.logWarning("Stopped listening for job notifications; listening again", cause)
          ),
          // workers still poll while this reconnects, so a lost notification only delays work
          Effect.repeat(Schedule.exponential("1 second").pipe(Schedule.union(Schedule.spaced("30 seconds")))),
          Effect.forkIn(layerScope),
          Effect.asVoid
        )
      )

      return JobQueue.of({
        enqueue: enqueueOneWith(enqueueMany),

        enqueueMany,

        stats: Effect.flatMap(Clock.currentTimeMillis, (now) =>
          run(
            "read queue stats",
            decodeStats,
            sql`
              SELECT queue,
                count(*) FILTER (WHERE state = 'queued' AND run_at <= ${toIso(now)}::timestamptz)::integer AS queued,
                count(*) FILTER (WHERE state = 'queued' AND run_at > ${toIso(now)}::timestamptz)::integer AS scheduled,
                count(*) FILTER (WHERE state = 'running')::integer AS running,
                count(*) FILTER (WHERE state = 'dead')::integer AS dead,
                (extract(epoch FROM ${toIso(now)}::timestamptz
                  - min(run_at) FILTER (WHERE state = 'queued' AND run_at <= ${toIso(now)}::timestamptz)) * 1000
                )::float8 AS oldest_runnable_age_ms
              FROM jobs.jobs
              GROUP BY queue
              ORDER BY queue
            `.withoutTransform
          )),

        claim: ({ completed = [], leaseDuration, limit, queue, workerId }) =>
          Effect.gen(function*() {
            const now = yield* Clock.currentTimeMillis
            const token = yield* newClaimToken
            const rows = yield* run(
              `claim jobs on queue "${queue}"`,
              decodeClaimed,
              sql`
                WITH ${completed.length === 0 ? sql`` : sql`completed AS (${deleteCompleted(completed)}),`}
                candidates AS (
                  SELECT id FROM jobs.jobs
                  WHERE queue = ${queue} AND state = 'queued' AND run_at <= ${toIso(now)}::timestamptz
                  ORDER BY priority DESC, run_at, id
                  LIMIT ${limit}
                  FOR UPDATE SKIP LOCKED
                )
                UPDATE jobs.jobs AS job
                SET state = 'running',
                  attempts = job.attempts + 1,
                  locked_by = ${workerId},
                  locked_until = ${toIso(now + Duration.toMillis(leaseDuration))}::timestamptz,
                  claim_token = ${token}
                FROM candidates
                WHERE job.id = candidates.id
                RETURNING job.id::text AS id, job.payload, job.attempts, job.max_attempts, job.priority, job.trace_parent
              `.withoutTransform
            )
            return rows
              .map((row) => ({
                id: row.id,
                claimToken: token,
                queue,
                payload: row.payload,
                attempt: row.attempts,
                maxAttempts: row.max_attempts,
                priority: row.priority,
                traceParent: row.trace_parent
              }))
              .sort((a, b) => b.priority - a.priority || Number(a.id) - Number(b.id))
          }),

        complete: (claims) =>
          claims.length === 0 ? Effect.void : execute("complete jobs", deleteCompleted(claims)),

        fail: (claim, failure) =>
          Effect.gen(function*() {
            const now = yield* Clock.currentTimeMillis
            const retryAt = Option.match(failure.retryAfter, {
              onNone: () => null,
              onSome: (delay) => toIso(now + Duration.toMillis(delay))
            })
            const rows = yield* run(
              `record the failure of job ${claim.id}`,
              decodeState,
              sql`
                UPDATE jobs.jobs
                SET state = CASE WHEN ${retryAt}::timestamptz IS NOT NULL AND attempts < max_attempts THEN 'queued' ELSE 'dead' END,
                  run_at = CASE WHEN ${retryAt}::timestamptz IS NOT NULL AND attempts < max_attempts THEN ${retryAt}::timestamptz ELSE run_at END,
                  failed_at = CASE WHEN ${retryAt}::timestamptz IS NOT NULL AND attempts < max_attempts THEN NULL ELSE ${toIso(now)}::timestamptz END,
                  last_error = ${failure.error},
                  locked_by = NULL, locked_until = NULL, claim_token = NULL
                WHERE id = ${claim.id}::bigint AND claim_token = ${claim.claimToken}
                RETURNING state
              `.withoutTransform
            )
            const row = rows[0]
            return row === undefined ? "lost" : row.state === "queued" ? "retrying" : "dead"
          }),

        extendLeases: (claims, leaseDuration) =>
          claims.length === 0 ? Effect.void : Effect.flatMap(Clock.currentTimeMillis, (now) =>
            execute(
              "extend job leases",
              sql`
                UPDATE jobs.jobs AS job
                SET locked_until = ${toIso(now + Duration.toMillis(leaseDuration))}::timestamptz
                FROM jsonb_to_recordset(${claimsJson(claims)}::jsonb) AS held(id bigint, token text)
                WHERE job.id = held.id AND job.claim_token = held.token
              `
            )),

        release: (claims) =>
          claims.length === 0 ? Effect.void : execute(
            "hand jobs back",
            sql`
              UPDATE jobs.jobs AS job
              SET state = 'queued', attempts = job.attempts - 1, locked_by = NULL, locked_until = NULL, claim_token = NULL
              FROM jsonb_to_recordset(${claimsJson(claims)}::jsonb) AS held(id bigint, token text)
              WHERE job.id = held.id AND job.claim_token = held.token
            `
          ),

        recoverExpiredLeases: (queue) =>
          Effect.gen(function*() {
            const now = toIso(yield* Clock.currentTimeMillis)
            const rows = yield* run(
              `recover expired leases on queue "${queue}"`,
              decodeCount,
              sql`
                WITH recovered AS (
                  UPDATE jobs.jobs
                  SET state = CASE WHEN attempts >= max_attempts THEN 'dead' ELSE 'queued' END,
                    failed_at = CASE WHEN attempts >= max_attempts THEN ${now}::timestamptz ELSE NULL END,
                    last_error = ${LEASE_EXPIRED_ERROR},
                    locked_by = NULL, locked_until = NULL, claim_token = NULL
                  WHERE id IN (
                    SELECT id FROM jobs.jobs
                    WHERE queue = ${queue} AND state = 'running' AND locked_until <= ${now}::timestamptz
                    FOR UPDATE SKIP LOCKED
                  )
                  RETURNING 1
                )
                SELECT count(*)::integer AS count FROM recovered
              `.withoutTransform
            )
            return rows[0]?.count ?? 0
          }),

        endAllLeases: Effect.gen(function*() {
          const now = toIso(yield* Clock.currentTimeMillis)
          const rows = yield* run(
            "end every lease",
            decodeCount,
            sql`
              WITH ended AS (
                UPDATE jobs.jobs SET locked_until = ${now}::timestamptz
                WHERE state = 'running' AND locked_until > ${now}::timestamptz
                RETURNING 1
              )
              SELECT count(*)::integer AS count FROM ended
            `.withoutTransform
          )
          return rows[0]?.count ?? 0
        }),

        wakeups: (queue) =>
          Stream.fromPubSub(enqueuedQueues).pipe(
            Stream.filter((enqueuedQueue) => enqueuedQueue === queue),
            Stream.as(undefined),
            Stream.onStart(startListening)
          ),

        signal: (name) =>
          Effect.flatMap(Effect.serviceOption(TransactionConnection), (transaction) =>
            Option.isNone(transaction)
              ? publishEnqueued(name)
              : execute("notify other copies", sql`SELECT pg_notify(${NOTIFY_CHANNEL}, ${name})`).pipe(
                // when listening, the commit's notification wakes this copy too
                Effect.zipRight(options.listen === undefined ? PubSub.publish(enqueuedQueues, name) : Effect.void)
              )),

        retryDead: (queue) =>
          Effect.gen(function*() {
            const now = toIso(yield* Clock.currentTimeMillis)
            const rows = yield* run(
              "retry dead jobs",
              decodeCount,
              sql`
                WITH retried AS (
                  UPDATE jobs.jobs
                  SET state = 'queued', attempts = 0, run_at = ${now}::timestamptz, last_error = NULL, failed_at = NULL
                  WHERE id IN (
                    SELECT DISTINCT ON (queue, coalesce(dedupe_key, id::text)) id
                    FROM jobs.jobs AS dead
                    WHERE state = 'dead' AND (${queue ?? null}::text IS NULL OR queue = ${queue ?? null}::text)
                      AND NOT EXISTS (
                        SELECT 1 FROM jobs.jobs AS live
                        WHERE live.queue = dead.queue AND live.dedupe_key = dead.dedupe_key AND live.state <> 'dead'
                      )
                    ORDER BY queue, coalesce(dedupe_key, id::text), id DESC
                  )
                  RETURNING 1
                )
                SELECT count(*)::integer AS count FROM retried
              `.withoutTransform
            )
            return rows[0]?.count ?? 0
          }),

        listDead: (queue, limit) =>
          run(
            `list dead jobs on queue "${queue}"`,
            decodeDead,
            sql`
              SELECT id::text AS id, queue, payload, attempts, max_attempts, last_error,
                (extract(epoch FROM failed_at) * 1000)::float8 AS failed_at_ms
              FROM jobs.jobs
              WHERE queue = ${queue} AND state = 'dead'
              ORDER BY failed_at DESC, id DESC
              LIMIT ${limit}
            `.withoutTransform
          ).pipe(
            Effect.map((rows) =>
              rows.map((row) => ({
                id: row.id,
                queue: row.queue,
                payload: row.payload,
                attempts: row.attempts,
                maxAttempts: row.max_attempts,
                lastError: row.last_error,
                failedAt: new Date(row.failed_at_ms)
              }))
            )
          ),

        ensureSchedule: (name, slot) =>
          Effect.flatMap(Clock.currentTimeMillis, (now) =>
            execute(
              `register schedule "${name}"`,
              sql`
                INSERT INTO jobs.schedules (name, last_slot, updated_at)
                VALUES (${name}, ${slot.toISOString()}::timestamptz, ${toIso(now)}::timestamptz)
                ON CONFLICT (name) DO NOTHING
              `
            )),

        fireSchedule: ({ definition, name, payload, slot }) =>
          Effect.gen(function*() {
            const now = yield* Clock.currentTimeMillis
            const advanced = yield* run(
              `fire schedule "${name}"`,
              decodeFired,
              sql`
                UPDATE jobs.schedules
                SET last_slot = ${slot.toISOString()}::timestamptz, updated_at = ${toIso(now)}::timestamptz
                WHERE name = ${name} AND last_slot < ${slot.toISOString()}::timestamptz
                RETURNING name
              `.withoutTransform
            )
            if (advanced.length === 0) return false
            yield* enqueueMany(definition, [{ payload }])
            return true
          }).pipe(
            sql.withTransaction,
            Effect.catchTag("SqlError", (cause) =>
              new JobQueueError({ message: `Could not fire schedule "${name}": ${cause.message}`, cause }))
          )
      })
    })
  )
