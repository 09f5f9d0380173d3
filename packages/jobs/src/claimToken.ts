import { Effect } from "effect"
import { randomUUID } from "node:crypto"

export const newClaimToken: Effect.Effect<string> = Effect.sync(() => randomUUID())
