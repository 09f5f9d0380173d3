import { Effect, Either, Option } from "effect"
import { SubscriberListNotFound, SubscriberNotFound, SubscriptionNotFound, UnprocessableEntity } from "../api/errors"
import { unstorableTextProblem } from "../api/text"
import { normaliseAddress } from "../domain/address"
import type { EmailAddress } from "../domain/address"
import { MAX_SLUG_LENGTH } from "../domain/slug"

export const listNotFound = new SubscriberListNotFound({ error: "Could not find the subscriber list" })
export const subscriberNotFound = new SubscriberNotFound({ error: "Could not find the subscriber" })
export const subscriptionNotFound = new SubscriptionNotFound({ error: "Could not find the subscription" })

/** A 422 naming each refused field with what is wrong with it. */
export const refused = (problems: Record<string, string>) =>
  new UnprocessableEntity({
    error: Object.entries(problems).map(([field, problem]) => `${field}: ${problem}`).join(", "),
    details: Object.fromEntries(Object.entries(problems).map(([field, problem]) => [field, [problem]]))
  })

export const checkedAddress = (field: string, address: string): Effect.Effect<EmailAddress, UnprocessableEntity> =>
  Either.match(normaliseAddress(address), {
    onLeft: (invalid) => Effect.fail(refused({ [field]: invalid.problem })),
    onRight: Effect.succeed
  })

export const orFail = <A, E>(error: E) => (option: Option.Option<A>): Effect.Effect<A, E> =>
  Option.match(option, { onNone: () => Effect.fail(error), onSome: Effect.succeed })

/** Whether `slug` could be one: text a database cannot hold, or longer than any slug, is never looked up. */
export const isSlug = (slug: string) => slug.length <= MAX_SLUG_LENGTH && unstorableTextProblem(slug) === undefined
