import { Context, Effect, Layer } from "effect"
import type { Scope } from "effect"
import type { ClaimedNewChecks, ClaimRequest } from "../storage/LinkcheckStore"

/** A running scheduler's side of `LocalClaims`. */
export interface Claimer {
  /** Runs `write` with a claim of this scheduler's (or none: it is stopping, or full) and takes what it claimed. */
  readonly claimWhile: <E>(
    write: (claim: ClaimRequest | undefined) => Effect.Effect<ClaimedNewChecks, E>
  ) => Effect.Effect<ClaimedNewChecks, E>
}

/**
 * Lets the request side write new checks already claimed for the scheduler running in this process, so that a large
 * batch's checks start as they are written rather than after a claim that waits for the whole batch to be written.
 */
export class LocalClaims extends Context.Tag("@civicstack/core-linkcheck/LocalClaims")<LocalClaims, {
  /** Makes `claimer` this process's scheduler until the scope closes. */
  readonly register: (claimer: Claimer) => Effect.Effect<void, never, Scope.Scope>
  /** Runs `write` with a claim of the local scheduler; with none when no scheduler runs here. */
  readonly claimWhile: <E>(
    write: (claim: ClaimRequest | undefined) => Effect.Effect<ClaimedNewChecks, E>
  ) => Effect.Effect<ClaimedNewChecks, E>
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
      claimWhile: (write) =>
        Effect.suspend(() => (current === undefined ? write(undefined) : current.claimWhile(write)))
    }
  })
}
