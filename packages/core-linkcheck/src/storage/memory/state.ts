import { HashMap, Option, Order, SortedSet } from "effect"
import type { CheckPriority, CheckRecord, CheckResult, Webhook } from "../../domain/check"
import { siteOf } from "../../domain/site"
import type { WebhookAttempt } from "../LinkcheckStore"

/** The memory store's state, and how its checks are kept: every record family reads and writes through these. */

export interface StoredCheck {
  readonly id: string
  readonly uri: string
  readonly host: string
  readonly priority: CheckPriority
  readonly createdAt: Date
  readonly completedAt: Date | null
  readonly result: CheckResult | null
  readonly readsAnchors: boolean
  readonly anchors: ReadonlyArray<string> | null
  readonly claimedBy: string | null
  readonly claimedUntil: Date | null
  readonly claimedAt: Date | null
  readonly attempts: number
}

export interface StoredWorker {
  readonly hostname: string
  readonly pid: number
  readonly heartbeatAt: Date
}

export interface StoredBatch {
  readonly id: number
  readonly createdAt: Date
  readonly completedAt: Date | null
  readonly webhook: Webhook | null
  readonly owner: string | null
  readonly traceParent: string | null
  readonly checkIds: ReadonlyArray<string>
  /** The links as given, `checkIds[i]` checking the page of `uris[i]`. */
  readonly uris: ReadonlyArray<string>
  readonly checkFragments: boolean
  readonly pendingLinks: number
  readonly webhookAttempts: ReadonlyArray<WebhookAttempt>
}

/** How many links of one batch point at a check. */
export interface BatchLinks {
  readonly batchId: number
  readonly links: number
}

/** Immutable, so that a transaction can be rolled back by restoring the state it started from. */
export interface State {
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

export const emptyState: State = {
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

export const recordOf = (check: StoredCheck): CheckRecord => ({
  id: check.id,
  uri: check.uri,
  priority: check.priority,
  createdAt: check.createdAt,
  completedAt: check.completedAt,
  result: check.result,
  anchors: check.anchors
})

export const isNewer = (a: StoredCheck, b: StoredCheck) =>
  a.createdAt.getTime() !== b.createdAt.getTime() ? a.createdAt > b.createdAt : Number(a.id) > Number(b.id)

export const isClaimable = (check: StoredCheck, now: Date) =>
  check.completedAt === null && (check.claimedUntil === null || check.claimedUntil < now)

export const isHeldBy = (check: StoredCheck, workerId: string) => check.completedAt === null && check.claimedBy === workerId

export const waitingKey = (check: StoredCheck): "waitingHigh" | "waitingLow" =>
  check.priority === "high" ? "waitingHigh" : "waitingLow"

export const checkOf = (state: State, id: string) => HashMap.get(state.checks, id)

/** Replaces a stored check, keeping the waiting sets in step with its priority and completion. */
export const putCheck = (state: State, check: StoredCheck): State => {
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

export interface NewCheck {
  readonly uri: string
  readonly readsAnchors?: boolean
  readonly priority: CheckPriority
  readonly now: Date
}

export const insertCheck = (
  state: State,
  input: NewCheck,
  claim: { readonly workerId: string; readonly until: Date } | undefined
): readonly [StoredCheck, State] => {
  const check: StoredCheck = {
    id: String(state.lastCheckId + 1),
    uri: input.uri,
    host: siteOf(input.uri),
    priority: input.priority,
    createdAt: input.now,
    completedAt: null,
    result: null,
    readsAnchors: input.readsAnchors ?? false,
    anchors: null,
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

export const newestCheck = (
  state: State,
  uri: string,
  options: { readonly since: Date; readonly completedOnly: boolean; readonly readsAnchors?: boolean | undefined }
): StoredCheck | undefined => {
  let newest: StoredCheck | undefined
  for (const id of Option.getOrElse(HashMap.get(state.checkIdsByUri, uri), () => [])) {
    const check = Option.getOrThrow(checkOf(state, id))
    if (check.createdAt < options.since || (options.completedOnly && check.completedAt === null)) continue
    if (options.readsAnchors === true && !check.readsAnchors) continue
    if (newest === undefined || isNewer(check, newest)) newest = check
  }
  return newest
}
