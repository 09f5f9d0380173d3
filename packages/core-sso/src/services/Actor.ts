import { Context } from "effect"

/** Who makes a change through the `Directory`: an administrator, the user themselves, or an operator's tool. */
export type ActorValue =
  | { readonly kind: "administrator" | "user"; readonly uid: string; readonly email: string }
  | { readonly kind: "cli" | "bootstrap" | "system" }

/**
 * The actor of the changes in an effect, named in each event the `Directory` records. Hosts provide it where they
 * know who acts: the admin API for its caller, the CLI and the bootstrap file for themselves.
 */
export class Actor extends Context.Reference<Actor>()("@civicstack/core-sso/Actor", {
  defaultValue: (): ActorValue => ({ kind: "system" })
}) {}

/** The actor as an event's detail names it. */
export const actorDetail = (actor: ActorValue) => ("uid" in actor ? { ...actor } : { kind: actor.kind })
