import { Effect, FiberRef, HashMap, Layer, Option, Order, Ref, SortedSet } from "effect"
import type { BatchRecord, CheckPriority, CheckRecord, CheckResult, ClaimedCheck, Webhook } from "../domain/check"
import { hostOf } from "../domain/check"
import type {
  CheckCompletion,
  ClaimRequest,
  CompletedChecks,
  NewBatch,
  WebhookAttempt,
  WorkerHeartbeat,
  Workload
} from "./LinkcheckStore"
import { batchReportJson } from "../wire"
import { LinkcheckStore, StoreError } from "./LinkcheckStore"

interface StoredCheck {
  readonly id: string
  readonly uri: string
  readonly host: string
  readonly priority: CheckPriority
  readonly createdAt: Date
  readonly completedAt: Date | null
  readonly result: CheckResult | null
  readonly claimedBy: string | null
  readonly claimedUntil: Date | null
  readonly claimedAt: Date | null
  readonly attempts: number
}

interface StoredWorker {
  readonly hostname: string
  readonly pid: number
  readonly heartbeatAt: Date
}

interface StoredBatch {
  readonly id: number
  readonly createdAt: Date
  readonly completedAt: Date | null
  readonly webhook: Webhook | null
  readonly checkIds: ReadonlyArray<string>
  readonly pendingLinks: number
  readonly webhookAttempts: ReadonlyArray<WebhookAttempt>
}

/** How many links of one batch point at a check. */
interface BatchLinks {
  readonly batchId: number
  readonly links: number
}

/** Immutable, so that a transaction can be rolled back by restoring the state it started from. */
interface State {
  readonly lastCheckId: number
  readonly lastBatchId: number
  readonly checks: HashMap.HashMap<string, StoredCheck>
  /** In creation order. */
  readonly checkIdsByUri: HashMap.HashMap<string, ReadonlyArray<string>>
  readonly batches: HashMap.HashMap<number, StoredBatch>
  readonly batchLinksByCheck: HashMap.HashMap<string, ReadonlyArray<BatchLinks>>
  /** Ids (as numbers) of checks not completed yet, by priority. */
  readonly waitingHigh: SortedSet.SortedSet<number>
  readonly waitingLow: SortedSet.SortedSet<number>
  readonly workers: HashMap.HashMap<string, StoredWorker>
}

const emptyState: State = {
  lastCheckId: 0,
  lastBatchId: 0,
  checks: HashMap.empty(),
  checkIdsByUri: HashMap.empty(),
  batches: HashMap.empty(),
  batchLinksByCheck: HashMap.empty(),
  waitingHigh: SortedSet.empty(Order.number),
  waitingLow: SortedSet.empty(Order.number),
  workers: HashMap.empty()
}

const recordOf = (check: StoredCheck): CheckRecord => ({
  id: check.id,
  uri: check.uri,
  priority: check.priority,
  createdAt: check.createdAt,
  completedAt: check.completedAt,
  result: check.result
})

const isNewer = (a: StoredCheck, b: StoredCheck) =>
  a.createdAt.getTime() !== b.createdAt.getTime() ? a.createdAt > b.createdAt : Number(a.id) > Number(b.id)

const isClaimable = (check: StoredCheck, now: Date) =>
  check.completedAt === null && (check.claimedUntil === null || check.claimedUntil < now)

const isHeldBy = (check: StoredCheck, workerId: string) => check.completedAt === null && check.claimedBy === workerId

const waitingKey = (check: StoredCheck): "waitingHigh" | "waitingLow" =>
  check.priority === "high" ? "waitingHigh" : "waitingLow"

const checkOf = (state: State, id: string) => HashMap.get(state.checks, id)

/** Replaces a stored check, keeping the waiting sets in step with its priority and completion. */
const putCheck = (state: State, check: StoredCheck): State => {
  const previous = Option.getOrUndefined(checkOf(state, check.id))
  let next: State = { ...state, checks: HashMap.set(state.checks, check.id, check) }
  if (previous !== undefined && previous.completedAt === null) {
    const key = waitingKey(previous)
    next = { ...next, [key]: SortedSet.remove(next[key], Number(previous.id)) }
  }
  if (check.completedAt === null) {
    const key = waitingKey(check)
    next = { ...next, [key]: SortedSet.add(next[key], Number(check.id)) }
  }
  return next
}

const insertCheck = (
  state: State,
  input: { readonly uri: string; readonly priority: CheckPriority; readonly now: Date },
  claim: { readonly workerId: string; readonly until: Date } | undefined
): readonly [StoredCheck, State] => {
  const check: StoredCheck = {
    id: String(state.lastCheckId + 1),
    uri: input.uri,
    host: hostOf(input.uri),
    priority: input.priority,
    createdAt: input.now,
    completedAt: null,
    result: null,
    claimedBy: claim?.workerId ?? null,
    claimedUntil: claim?.until ?? null,
    claimedAt: claim === undefined ? null : input.now,
    attempts: claim === undefined ? 0 : 1
  }
  const sameUri = Option.getOrElse(HashMap.get(state.checkIdsByUri, input.uri), () => [])
  const next = putCheck({
    ...state,
    lastCheckId: state.lastCheckId + 1,
    checkIdsByUri: HashMap.set(state.checkIdsByUri, input.uri, [...sameUri, check.id])
  }, check)
  return [check, next]
}

const newestCheck = (
  state: State,
  uri: string,
  options: { readonly since: Date; readonly completedOnly: boolean }
): StoredCheck | undefined => {
  let newest: StoredCheck | undefined
  for (const id of Option.getOrElse(HashMap.get(state.checkIdsByUri, uri), () => [])) {
    const check = Option.getOrThrow(checkOf(state, id))
    if (check.createdAt < options.since || (options.completedOnly && check.completedAt === null)) continue
    if (newest === undefined || isNewer(check, newest)) newest = check
  }
  return newest
}

const latestCompletion = (checks: ReadonlyArray<StoredCheck>): Date | null =>
  checks.reduce<Date | null>(
    (latest, check) =>
      check.completedAt !== null && (latest === null || check.completedAt > latest) ? check.completedAt : latest,
    null
  )

const storedBatchRecord = (state: State, batch: StoredBatch): BatchRecord => ({
  id: batch.id,
  createdAt: batch.createdAt,
  completedAt: batch.completedAt,
  webhook: batch.webhook,
  checks: batch.checkIds.map((id) => recordOf(Option.getOrThrow(checkOf(state, id))))
})

const createBatch = (initial: State, batch: NewBatch): readonly [BatchRecord, State] => {
  let state = initial
  const checkByUri = new Map<string, StoredCheck>()
  for (const uri of new Set(batch.uris)) {
    let check = batch.reuseSince === null
      ? undefined
      : newestCheck(state, uri, { since: batch.reuseSince, completedOnly: false })
    if (check === undefined) {
      ;[check, state] = insertCheck(state, { uri, priority: batch.priority, now: batch.now }, undefined)
    } else if (check.completedAt === null && check.priority === "low" && batch.priority === "high") {
      check = { ...check, priority: "high" }
      state = putCheck(state, check)
    }
    checkByUri.set(uri, check)
  }
  const checks = batch.uris.map((uri) => checkByUri.get(uri)!)
  const pendingLinks = checks.filter((check) => check.completedAt === null).length
  const stored: StoredBatch = {
    id: state.lastBatchId + 1,
    createdAt: batch.now,
    completedAt: pendingLinks > 0 ? null : latestCompletion(checks) ?? batch.now,
    webhook: batch.webhook,
    checkIds: checks.map((check) => check.id),
    pendingLinks,
    webhookAttempts: []
  }
  const linksByCheck = new Map<string, number>()
  for (const id of stored.checkIds) linksByCheck.set(id, (linksByCheck.get(id) ?? 0) + 1)
  let batchLinksByCheck = state.batchLinksByCheck
  for (const [checkId, links] of linksByCheck) {
    const existing = Option.getOrElse(HashMap.get(batchLinksByCheck, checkId), () => [])
    batchLinksByCheck = HashMap.set(batchLinksByCheck, checkId, [...existing, { batchId: stored.id, links }])
  }
  state = {
    ...state,
    lastBatchId: stored.id,
    batches: HashMap.set(state.batches, stored.id, stored),
    batchLinksByCheck
  }
  return [storedBatchRecord(state, stored), state]
}

/** Per host, the pending checks that workers other than `request`'s hold until `now` at least. */
const heldByOthers = (state: State, request: ClaimRequest): Map<string, number> => {
  const held = new Map<string, number>()
  for (const ids of [state.waitingHigh, state.waitingLow]) {
    for (const id of SortedSet.values(ids)) {
      const check = Option.getOrThrow(checkOf(state, String(id)))
      if (!isClaimable(check, request.now) && check.claimedBy !== request.workerId) {
        held.set(check.host, (held.get(check.host) ?? 0) + 1)
      }
    }
  }
  return held
}

/** Same selection as the SQL adapter: per-host ranks over all claimable checks, then the low quota, then the rest. */
const claimChecks = (initial: State, request: ClaimRequest): readonly [ReadonlyArray<ClaimedCheck>, State] => {
  const limit = Math.max(0, Math.floor(request.limit))
  const lowQuota = Math.min(limit, Math.max(0, Math.floor(request.lowPriorityQuota)))
  const others = heldByOthers(initial, request)
  const liveWorkers = Math.max(
    1,
    [...HashMap.values(initial.workers)].filter((worker) => worker.heartbeatAt >= request.workersAliveSince).length
  )
  const ahead = liveWorkers > 1 ? 0 : Math.max(0, request.aheadPerHost)
  const share = Math.ceil(request.perHost / liveWorkers) + ahead
  const allowance = (host: string) => {
    const byOthers = others.get(host)
    const ceiling = byOthers === undefined ? request.perHost + ahead : request.perHost - byOthers
    return Math.min(ceiling, share) - (request.heldByHost.get(host) ?? 0)
  }
  const rankByHost = new Map<string, number>()
  const allowedHigh: Array<StoredCheck> = []
  const allowedLow: Array<StoredCheck> = []
  for (const [ids, allowed] of [[initial.waitingHigh, allowedHigh], [initial.waitingLow, allowedLow]] as const) {
    for (const id of SortedSet.values(ids)) {
      if (allowed.length >= limit) break
      const check = Option.getOrThrow(checkOf(initial, String(id)))
      if (!isClaimable(check, request.now)) continue
      const rank = (rankByHost.get(check.host) ?? 0) + 1
      rankByHost.set(check.host, rank)
      if (rank <= allowance(check.host)) allowed.push(check)
    }
  }
  const chosen = [
    ...allowedLow.slice(0, lowQuota),
    ...[...allowedHigh, ...allowedLow.slice(lowQuota)].slice(0, limit - Math.min(lowQuota, allowedLow.length))
  ]
  let state = initial
  const claimed = chosen.map((check): ClaimedCheck => {
    const attempts = check.attempts + 1
    state = putCheck(state, {
      ...check,
      claimedBy: request.workerId,
      claimedUntil: request.claimUntil,
      claimedAt: request.now,
      attempts
    })
    return { id: check.id, uri: check.uri, host: check.host, priority: check.priority, attempts }
  })
  const byClaimOrder = (a: ClaimedCheck, b: ClaimedCheck) =>
    a.priority === b.priority ? Number(a.id) - Number(b.id) : a.priority === "high" ? -1 : 1
  return [claimed.sort(byClaimOrder), state]
}

const updateHeldChecks = (
  initial: State,
  workerId: string,
  ids: ReadonlyArray<string>,
  update: (check: StoredCheck) => StoredCheck
): State => {
  let state = initial
  for (const id of new Set(ids)) {
    const check = Option.getOrUndefined(checkOf(state, id))
    if (check !== undefined && isHeldBy(check, workerId)) state = putCheck(state, update(check))
  }
  return state
}

const completeChecks = (
  initial: State,
  input: { readonly workerId: string; readonly now: Date; readonly results: ReadonlyArray<CheckCompletion> }
): readonly [CompletedChecks, State] => {
  let state = initial
  const recorded: Array<string> = []
  const completedBatches: Array<{ readonly id: number; readonly webhook: Webhook | null }> = []
  for (const { id, result } of input.results) {
    const check = Option.getOrUndefined(checkOf(state, id))
    if (check === undefined || !isHeldBy(check, input.workerId)) continue
    recorded.push(id)
    state = putCheck(state, { ...check, completedAt: input.now, result, claimedBy: null, claimedUntil: null, claimedAt: null })
    for (const { batchId, links } of Option.getOrElse(HashMap.get(state.batchLinksByCheck, check.id), () => [])) {
      const batch = Option.getOrThrow(HashMap.get(state.batches, batchId))
      if (batch.completedAt !== null) continue
      const pendingLinks = batch.pendingLinks - links
      const completedAt = pendingLinks === 0 ? input.now : null
      if (completedAt !== null) completedBatches.push({ id: batch.id, webhook: batch.webhook })
      state = { ...state, batches: HashMap.set(state.batches, batchId, { ...batch, pendingLinks, completedAt }) }
    }
  }
  return [{ recorded, completedBatches: completedBatches.sort((a, b) => a.id - b.id) }, state]
}

const recordWebhookAttempt = (state: State, attempt: WebhookAttempt): readonly [boolean, State] =>
  Option.match(HashMap.get(state.batches, attempt.batchId), {
    onNone: () => [false, state] as const,
    onSome: (batch) =>
      [true, {
        ...state,
        batches: HashMap.set(state.batches, batch.id, {
          ...batch,
          webhookAttempts: [...batch.webhookAttempts, attempt]
        })
      }] as const
  })

/** Every pending check of the worker, changed by `update`. */
const updateChecksOf = (initial: State, workerId: string, update: (check: StoredCheck) => StoredCheck): State => {
  let state = initial
  for (const ids of [initial.waitingHigh, initial.waitingLow]) {
    for (const id of SortedSet.values(ids)) {
      const check = Option.getOrThrow(checkOf(initial, String(id)))
      if (check.claimedBy === workerId) state = putCheck(state, update(check))
    }
  }
  return state
}

const heartbeat = (initial: State, beat: WorkerHeartbeat): State => {
  const workers = HashMap.set(initial.workers, beat.workerId, {
    hostname: beat.hostname,
    pid: beat.pid,
    heartbeatAt: beat.now
  })
  const holding = new Set(beat.holding)
  return updateChecksOf({ ...initial, workers }, beat.workerId, (check) =>
    holding.has(check.id)
      ? { ...check, claimedUntil: beat.claimUntil }
      : { ...check, claimedBy: null, claimedUntil: null, claimedAt: null })
}

const retireWorkers = (initial: State, workerIds: ReadonlyArray<string>): State =>
  workerIds.reduce(
    (state, workerId) =>
      updateChecksOf(
        { ...state, workers: HashMap.remove(state.workers, workerId) },
        workerId,
        (check) => ({ ...check, claimedBy: null, claimedUntil: null, claimedAt: null })
      ),
    initial
  )

const workload = (state: State, now: Date): Workload => {
  let pending = 0
  let claimed = 0
  let oldestClaimAt: Date | null = null
  for (const ids of [state.waitingHigh, state.waitingLow]) {
    for (const id of SortedSet.values(ids)) {
      const check = Option.getOrThrow(checkOf(state, String(id)))
      pending += 1
      if (isClaimable(check, now)) continue
      claimed += 1
      if (check.claimedAt !== null && (oldestClaimAt === null || check.claimedAt < oldestClaimAt)) {
        oldestClaimAt = check.claimedAt
      }
    }
  }
  return { pending, claimed, oldestClaimAt }
}

const byAttemptTime = (a: WebhookAttempt, b: WebhookAttempt) => a.attemptedAt.getTime() - b.attemptedAt.getTime()

const deleteCompletedBefore = (
  initial: State,
  before: Date
): readonly [{ readonly checks: number; readonly batches: number }, State] => {
  const expired = [...HashMap.values(initial.checks)].filter((check) =>
    check.completedAt !== null && check.completedAt < before
  )
  const batchIds = new Set(
    expired.flatMap((check) =>
      Option.getOrElse(HashMap.get(initial.batchLinksByCheck, check.id), () => []).map((link) => link.batchId)
    )
  )
  let { batchLinksByCheck, batches, checkIdsByUri, checks } = initial
  for (const batchId of batchIds) {
    const batch = Option.getOrThrow(HashMap.get(batches, batchId))
    batches = HashMap.remove(batches, batchId)
    for (const checkId of new Set(batch.checkIds)) {
      batchLinksByCheck = HashMap.modify(batchLinksByCheck, checkId, (links) =>
        links.filter((link) => link.batchId !== batchId))
    }
  }
  for (const check of expired) {
    checks = HashMap.remove(checks, check.id)
    batchLinksByCheck = HashMap.remove(batchLinksByCheck, check.id)
    checkIdsByUri = HashMap.modify(checkIdsByUri, check.uri, (ids) => ids.filter((id) => id !== check.id))
  }
  return [
    { checks: expired.length, batches: batchIds.size },
    { ...initial, batchLinksByCheck, batches, checkIdsByUri, checks }
  ]
}

/** Marks the fibers of one open transaction; inherited by fibers it forks, which join it as on SQL. */
interface OpenTransaction {
  open: boolean
}

const make = Effect.gen(function*() {
  const stateRef = yield* Ref.make(emptyState)
  const lock = yield* Effect.makeSemaphore(1)
  const currentTransaction = yield* FiberRef.make<OpenTransaction | null>(null)

  const isInsideTransaction = Effect.map(FiberRef.get(currentTransaction), (transaction) =>
    transaction !== null && transaction.open)

  /** Runs one step on the state, waiting for any other fiber's transaction to finish first. */
  const atomically = <A>(step: (state: State) => readonly [A, State]): Effect.Effect<A> =>
    Effect.flatMap(isInsideTransaction, (inside) =>
      inside ? Ref.modify(stateRef, step) : lock.withPermits(1)(Ref.modify(stateRef, step)))

  const read = <A>(f: (state: State) => A) => atomically((state) => [f(state), state])

  const rollingBackOnFailure = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.flatMap(Ref.get(stateRef), (snapshot) => Effect.onError(effect, () => Ref.set(stateRef, snapshot)))

  const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | StoreError, R> =>
    Effect.flatMap(isInsideTransaction, (inside) =>
      inside
        ? rollingBackOnFailure(effect)
        : lock.withPermits(1)(Effect.suspend(() => {
          const opened: OpenTransaction = { open: true }
          return rollingBackOnFailure(effect).pipe(
            Effect.locally(currentTransaction, opened),
            Effect.ensuring(Effect.sync(() => {
              opened.open = false
            }))
          )
        })))

  return LinkcheckStore.of({
    transaction,
    findCheck: (uri, options) =>
      read((state) => Option.map(Option.fromNullable(newestCheck(state, uri, options)), recordOf)),
    createCheck: (input) =>
      atomically((state) => {
        const [check, next] = insertCheck(state, input, input.claim)
        return [recordOf(check), next]
      }),
    createChecks: (input) =>
      atomically((initial) => {
        let state = initial
        const created: Array<CheckRecord> = []
        for (const uri of new Set(input.uris)) {
          const reusable = input.reuseSince === null
            ? undefined
            : newestCheck(state, uri, { since: input.reuseSince, completedOnly: false })
          if (reusable !== undefined) continue
          const [check, next] = insertCheck(state, { uri, priority: input.priority, now: input.now }, undefined)
          created.push(recordOf(check))
          state = next
        }
        return [created, state]
      }),
    createBatch: (batch) => atomically((state) => createBatch(state, batch)),
    findBatch: (id) =>
      read((state) => Option.map(HashMap.get(state.batches, id), (batch) => storedBatchRecord(state, batch))),
    findWebhookReport: (id) =>
      read((state) =>
        Option.map(HashMap.get(state.batches, id), (batch) => {
          const record = storedBatchRecord(state, batch)
          return { webhook: record.webhook, reportJson: batchReportJson(record) }
        })
      ),
    claimChecks: (request) => atomically((state) => claimChecks(state, request)),
    extendClaims: (workerId, ids, until) =>
      atomically((state) => [
        undefined,
        updateHeldChecks(state, workerId, ids, (check) => ({ ...check, claimedUntil: until }))
      ]),
    releaseClaims: (workerId, ids) =>
      atomically((state) => [
        undefined,
        updateHeldChecks(state, workerId, ids, (check) => ({
          ...check,
          claimedBy: null,
          claimedUntil: null,
          claimedAt: null,
          attempts: check.attempts - 1
        }))
      ]),
    completeChecks: (input) => atomically((state) => completeChecks(state, input)),
    recordWebhookAttempt: (attempt) =>
      atomically((state) => recordWebhookAttempt(state, attempt)).pipe(
        Effect.filterOrFail(
          (recorded) => recorded,
          () => new StoreError({ message: `linkcheck store: no batch ${attempt.batchId} for a webhook attempt` })
        ),
        Effect.asVoid
      ),
    webhookAttempts: (batchId) =>
      read((state) =>
        Option.match(HashMap.get(state.batches, batchId), {
          onNone: () => [],
          onSome: (batch) => [...batch.webhookAttempts].sort(byAttemptTime)
        })
      ),
    heartbeat: (beat) => atomically((state) => [undefined, heartbeat(state, beat)]),
    workersOn: (hostname) =>
      read((state) =>
        [...HashMap.entries(state.workers)]
          .filter(([, worker]) => worker.hostname === hostname)
          .map(([id, worker]) => ({ id, pid: worker.pid }))
      ),
    retireWorkers: (workerIds) => atomically((state) => [undefined, retireWorkers(state, workerIds)]),
    workload: (now) => read((state) => workload(state, now)),
    deleteCompletedBefore: (before) => atomically((state) => deleteCompletedBefore(state, before))
  })
})

/** The store in this process's memory: for tests and for embedding without a database. */
export const layerMemory: Layer.Layer<LinkcheckStore> = Layer.scoped(LinkcheckStore, make)
