import { Effect } from "effect"

/**
 * Lets at most `perTurn` callers through between two turns of the event loop; the others wait for the next one.
 *
 * A send that finishes resumes its lane in an I/O callback, and Effect runs fibers on microtasks: without this, every
 * lane whose answer arrived starts its next send in the same turn, and a request read in that turn waits behind all
 * of them. Waiting for `setImmediate` lets the event loop poll for I/O (requests, database answers) before more sends
 * start. It bounds the work started per turn, not the total: as long as sends are ready, every turn starts `perTurn`.
 */
export interface TurnGate {
  readonly pass: Effect.Effect<void>
}

export const makeTurnGate = (perTurn: number): Effect.Effect<TurnGate> =>
  Effect.sync(() => {
    const limit = Math.max(1, Math.floor(perTurn))
    let passedThisTurn = 0
    let turnEndScheduled = false
    const waiting: Array<() => void> = []

    const scheduleTurnEnd = () => {
      if (turnEndScheduled) return
      turnEndScheduled = true
      // setImmediate callbacks queued while the check phase runs wait for the next turn, after the next I/O poll
      setImmediate(startTurn)
    }
    const startTurn = () => {
      turnEndScheduled = false
      const resumed = waiting.splice(0, limit)
      passedThisTurn = resumed.length
      if (resumed.length > 0) scheduleTurnEnd()
      for (const resume of resumed) resume()
    }

    const pass = Effect.suspend(() => {
      if (passedThisTurn < limit) {
        passedThisTurn += 1
        scheduleTurnEnd()
        return Effect.void
      }
      return Effect.async<void>((resume) => {
        const go = () => resume(Effect.void)
        waiting.push(go)
        scheduleTurnEnd()
        return Effect.sync(() => {
          const index = waiting.indexOf(go)
          if (index >= 0) waiting.splice(index, 1)
        })
      })
    })
    return { pass }
  })
