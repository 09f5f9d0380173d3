import { Context, Effect, Layer } from "effect"
import type { Scope } from "effect"
import type { ClaimedCheck } from "../domain/check"
import type { ClaimRequest } from "../storage/LinkcheckStore"

/** What a write that claims returns: at least the checks it claimed. */
export interface ClaimingWrite {
  readonly claimed: ReadonlyArray<ClaimedCheck>
}

/** A running scheduler's side of `LocalClaims`. */
export interface Claimer {
  /**
   * Runs `write` with a claim of this scheduler's for at most `wanted` checks (or none: it is stopping, or full), and
   * takes what it claimed.
   */
  readonly claimWhile: <A extends ClaimingWrite, E>(
    wanted: number,
    write: (claim: ClaimRequest | undefined) => Effect.Effect<A, E>
  ) => Effect.Effect<A, E>
}

/**
 * Lets the request side write new checks already claimed for the scheduler running in this process, which starts them
 * as soon as they are written, rather than after a claim of its own that costs the store another statement.
 */
export class LocalClaims extends Context.Tag("@civicstack/core-linkcheck/LocalClaims")<LocalClaims, Claimer & {
  /** Makes `claimer` this process's scheduler until the scope closes; without one, writes claim nothing. */
  readonly register: (claimer: Claimer) => Effect.Effect<void, never, Scope.Scope>
}>() {
  static readonly layer = Layer.sync(LocalClaims, () => {
    let current: Claimer | undefined
    return {
      register: (claimer) =>
        Effect.acquireRelease(
          Effect.sync(() => {
            current = claimer
          }),
          () =>
            Effect.sync(() => {
              if (current === claimer) current = undefined
            })
        ),
      claimWhile: (wanted, write) =>
        Effect.suspend(() => (current === undefined ? write(undefined) : current.claimWhile(wanted, write)))
    }
  })
}
