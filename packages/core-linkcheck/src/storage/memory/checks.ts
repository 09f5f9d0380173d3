import { HashMap, Option, SortedSet } from "effect"
import type { CheckRecord, ClaimedCheck } from "../../domain/check"
import { distinctPages } from "../../domain/fragments"
import { siteOf } from "../../domain/site"
import type { ClaimedNewChecks, ClaimRequest, NewChecks, Workload } from "../LinkcheckStore"
import type { NewCheck, State, StoredCheck } from "./state"
import { checkOf, insertCheck, isClaimable, isHeldBy, newestCheck, putCheck, recordOf } from "./state"

/** Per host, the pending checks that workers other than `request`'s hold until `now` at least. */
export const heldByOthers = (state: State, request: ClaimRequest): Map<string, number> => {
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

const liveWorkersOf = (state: State, request: ClaimRequest) =>
  Math.max(
    1,
    [...HashMap.values(state.workers)].filter((worker) => worker.heartbeatAt >= request.workersAliveSince).length
  )

/** How many more checks of a host the request may claim (see `ClaimRequest`). */
const hostAllowance = (state: State, request: ClaimRequest) => {
  const others = heldByOthers(state, request)
  const liveWorkers = liveWorkersOf(state, request)
  const ahead = liveWorkers > 1 ? 0 : Math.max(0, request.aheadPerHost)
  const share = Math.ceil(request.perHost / liveWorkers) + ahead
  return (host: string) => {
    const byOthers = others.get(host)
    const ceiling = byOthers === undefined ? request.perHost + ahead : request.perHost - byOthers
    return Math.min(ceiling, share) - (request.heldByHost.get(host) ?? 0)
  }
}

const claimedCheckOf = (check: StoredCheck): ClaimedCheck => ({
  id: check.id,
  uri: check.uri,
  host: check.host,
  priority: check.priority,
  attempts: check.attempts,
  readsAnchors: check.readsAnchors
})

/** The pages of `input` that need a new check, each once, in their order. */
const pagesWithoutCheck = (state: State, input: NewChecks) =>
  distinctPages(input.pages).filter(({ readsAnchors, uri }) =>
    input.reuseSince === null ||
    newestCheck(state, uri, { since: input.reuseSince, completedOnly: false, readsAnchors }) === undefined
  )

/**
 * Inserts new checks, claiming each while its host's allowance and the request's limit last, and only while no other
 * worker is alive: the same selection as the SQL adapter's.
 */
export const newCheckInserter = (initial: State, claim: ClaimRequest | undefined) => {
  const allowance = claim === undefined || liveWorkersOf(initial, claim) > 1 ? () => 0 : hostAllowance(initial, claim)
  const limit = claim === undefined ? 0 : Math.max(0, Math.floor(claim.limit))
  const claimedByHost = new Map<string, number>()
  const claimed: Array<ClaimedCheck> = []
  const insert = (state: State, input: NewCheck): readonly [StoredCheck, State] => {
    const host = siteOf(input.uri)
    const holder = claim !== undefined && claimed.length < limit && (claimedByHost.get(host) ?? 0) < allowance(host)
      ? { workerId: claim.workerId, until: claim.claimUntil }
      : undefined
    const inserted = insertCheck(state, input, holder)
    if (holder !== undefined) {
      claimed.push(claimedCheckOf(inserted[0]))
      claimedByHost.set(host, (claimedByHost.get(host) ?? 0) + 1)
    }
    return inserted
  }
  return { insert, claimed }
}

export const createChecks = (
  initial: State,
  input: NewChecks,
  claim?: ClaimRequest
): readonly [ClaimedNewChecks, State] => {
  const inserter = newCheckInserter(initial, claim)
  const created: Array<CheckRecord> = []
  let state = initial
  for (const { readsAnchors, uri } of pagesWithoutCheck(initial, input)) {
    const [check, next] = inserter.insert(state, { uri, readsAnchors, priority: input.priority, now: input.now })
    state = next
    created.push(recordOf(check))
  }
  return [{ created, claimed: inserter.claimed }, state]
}

/** Same selection as the SQL adapter: per-host ranks over all claimable checks, then the low quota, then the rest. */
export const claimChecks = (initial: State, request: ClaimRequest): readonly [ReadonlyArray<ClaimedCheck>, State] => {
  const limit = Math.max(0, Math.floor(request.limit))
  const lowQuota = Math.min(limit, Math.max(0, Math.floor(request.lowPriorityQuota)))
  const allowance = hostAllowance(initial, request)
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
  const claimed = chosen.map((check) => {
    const claimedCheck: StoredCheck = {
      ...check,
      claimedBy: request.workerId,
      claimedUntil: request.claimUntil,
      claimedAt: request.now,
      attempts: check.attempts + 1
    }
    state = putCheck(state, claimedCheck)
    return claimedCheckOf(claimedCheck)
  })
  const byClaimOrder = (a: ClaimedCheck, b: ClaimedCheck) =>
    a.priority === b.priority ? Number(a.id) - Number(b.id) : a.priority === "high" ? -1 : 1
  return [claimed.sort(byClaimOrder), state]
}

export const updateHeldChecks = (
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

export const workload = (state: State, now: Date): Workload => {
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
