import { HashMap, Option, SortedSet } from "effect"
import type { WorkerHeartbeat } from "../LinkcheckStore"
import type { State, StoredCheck } from "./state"
import { checkOf, putCheck } from "./state"

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

export const heartbeat = (initial: State, beat: WorkerHeartbeat): State => {
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

export const retireWorkers = (initial: State, workerIds: ReadonlyArray<string>): State =>
  workerIds.reduce(
    (state, workerId) =>
      updateChecksOf(
        { ...state, workers: HashMap.remove(state.workers, workerId) },
        workerId,
        (check) => ({ ...check, claimedBy: null, claimedUntil: null, claimedAt: null })
      ),
    initial
  )
