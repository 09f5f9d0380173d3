import { HashMap, Option } from "effect"
import type { BatchRecord } from "../../domain/check"
import { pagesOf, targetOf } from "../../domain/fragments"
import type {
  CheckCompletion,
  ClaimedNewBatch,
  ClaimRequest,
  CompletedBatch,
  CompletedChecks,
  NewBatch
} from "../LinkcheckStore"
import { newCheckInserter } from "./checks"
import type { State, StoredBatch, StoredCheck } from "./state"
import { checkOf, isHeldBy, newestCheck, putCheck, recordOf } from "./state"

const latestCompletion = (checks: ReadonlyArray<StoredCheck>): Date | null =>
  checks.reduce<Date | null>(
    (latest, check) =>
      check.completedAt !== null && (latest === null || check.completedAt > latest) ? check.completedAt : latest,
    null
  )

export const storedBatchRecord = (state: State, batch: StoredBatch): BatchRecord => ({
  id: batch.id,
  createdAt: batch.createdAt,
  completedAt: batch.completedAt,
  webhook: batch.webhook,
  owner: batch.owner,
  checks: batch.checkIds.map((id) => recordOf(Option.getOrThrow(checkOf(state, id)))),
  uris: batch.uris,
  checkFragments: batch.checkFragments
})

export const createBatch = (
  initial: State,
  batch: NewBatch,
  claim?: ClaimRequest
): readonly [ClaimedNewBatch, State] => {
  let state = initial
  const inserter = newCheckInserter(initial, claim)
  const checkFragments = batch.checkFragments ?? false
  const targets = batch.uris.map(targetOf)
  const checkByPage = new Map<string, StoredCheck>()
  for (const { readsAnchors, uri } of pagesOf(targets, checkFragments)) {
    let check = batch.reuseSince === null
      ? undefined
      : newestCheck(state, uri, { since: batch.reuseSince, completedOnly: false, readsAnchors })
    if (check === undefined) {
      ;[check, state] = inserter.insert(state, { uri, readsAnchors, priority: batch.priority, now: batch.now })
    } else if (check.completedAt === null && check.priority === "low" && batch.priority === "high") {
      check = { ...check, priority: "high" }
      state = putCheck(state, check)
    }
    checkByPage.set(uri, check)
  }
  const checks = targets.map(({ page }) => checkByPage.get(page)!)
  const pendingLinks = checks.filter((check) => check.completedAt === null).length
  const stored: StoredBatch = {
    id: state.lastBatchId + 1,
    createdAt: batch.now,
    completedAt: pendingLinks > 0 ? null : latestCompletion(checks) ?? batch.now,
    webhook: batch.webhook,
    owner: batch.owner ?? null,
    traceParent: batch.traceParent ?? null,
    checkIds: checks.map((check) => check.id),
    uris: batch.uris,
    checkFragments,
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
  return [{ batch: storedBatchRecord(state, stored), claimed: inserter.claimed }, state]
}

export const completeChecks = (
  initial: State,
  input: { readonly workerId: string; readonly now: Date; readonly results: ReadonlyArray<CheckCompletion> }
): readonly [CompletedChecks, State] => {
  let state = initial
  const recorded: Array<string> = []
  const completedBatches: Array<CompletedBatch> = []
  for (const { anchors, id, result } of input.results) {
    const check = Option.getOrUndefined(checkOf(state, id))
    if (check === undefined || !isHeldBy(check, input.workerId)) continue
    recorded.push(id)
    state = putCheck(state, {
      ...check,
      completedAt: input.now,
      result,
      anchors: anchors ?? null,
      claimedBy: null,
      claimedUntil: null,
      claimedAt: null
    })
    for (const { batchId, links } of Option.getOrElse(HashMap.get(state.batchLinksByCheck, check.id), () => [])) {
      const batch = Option.getOrThrow(HashMap.get(state.batches, batchId))
      if (batch.completedAt !== null) continue
      const pendingLinks = batch.pendingLinks - links
      const completedAt = pendingLinks === 0 ? input.now : null
      if (completedAt !== null) {
        completedBatches.push({ id: batch.id, webhook: batch.webhook, traceParent: batch.traceParent })
      }
      state = { ...state, batches: HashMap.set(state.batches, batchId, { ...batch, pendingLinks, completedAt }) }
    }
  }
  return [{ recorded, completedBatches: completedBatches.sort((a, b) => a.id - b.id) }, state]
}

export const deleteCompletedBefore = (
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
