import { HashMap, Option } from "effect"
import type { WebhookAttempt } from "../LinkcheckStore"
import type { State } from "./state"

export const recordWebhookAttempt = (state: State, attempt: WebhookAttempt): readonly [boolean, State] =>
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

export const byAttemptTime = (a: WebhookAttempt, b: WebhookAttempt) => a.attemptedAt.getTime() - b.attemptedAt.getTime()
