import { Cause, Clock, Duration, Effect, Exit, Option, Schedule } from "effect"
import { AlertsStore } from "../storage/AlertsStore"
import type { DeliveryFailure, OutgoingEmail } from "./EmailProvider"
import { EmailProvider, TemporaryDeliveryFailure } from "./EmailProvider"
import type { ClaimedEmail } from "./EmailStore"
import { EmailStore } from "./EmailStore"
import { makeRateLimiter } from "./rateLimiter"
import type { DeliverySettings } from "./settings"
import { unsubscribeUrlPrefix } from "./settings"

/** The wait before the attempt after `attempt`, at least what the provider asked for. */
export const retryDelayMillis = (
  backoff: DeliverySettings["backoff"],
  attempt: number,
  retryAfterMillis: number | undefined
) => {
  const exponential = Math.min(Duration.toMillis(backoff.max), Duration.toMillis(backoff.base) * 2 ** (attempt - 1))
  return Math.max(exponential, retryAfterMillis ?? 0)
}

export const outgoingEmail = (email: ClaimedEmail, settings: Pick<DeliverySettings, "publicSiteUrl">): OutgoingEmail => {
  const base = { id: email.id, address: email.address, subject: email.subject, body: email.body }
  return email.subscriptionIds.length === 1
    ? { ...base, unsubscribeUrl: `${unsubscribeUrlPrefix(settings)}${email.subscriptionIds[0]}` }
    : base
}

/**
 * Claims due emails in batches and hands them to the `EmailProvider` under the rate limit, until interrupted.
 * A temporary failure is tried again later (with backoff, or when the provider said); a permanent one fails the email,
 * and when the address was refused, ends every active subscription of it (`non_existent_email`). When interrupted, emails not yet sent go
 * back to pending; after a crash, the lease of claimed emails runs out and another worker claims them.
 */
export const runDeliveryWorker = (settings: DeliverySettings) =>
  Effect.gen(function*() {
    const emails = yield* EmailStore
    const alerts = yield* AlertsStore
    const provider = yield* EmailProvider
    const limiter = yield* makeRateLimiter(settings.rateLimitPerSecond)

    const endSubscriptionsOf = (address: string) =>
      Effect.flatMap(alerts.subscriberByAddress(address), (subscriber) =>
        Option.isNone(subscriber)
          ? Effect.void
          : Effect.asVoid(alerts.deactivateSubscriber(subscriber.value.id, "non_existent_email")))

    const settleFailure = (email: ClaimedEmail, failure: DeliveryFailure) =>
      Effect.gen(function*() {
        if (failure._tag === "PermanentDeliveryFailure") {
          yield* Effect.logWarning(`Email ${email.id} refused for good: ${failure.reason}`)
          const marked = yield* emails.markPermanentFailure(email, failure.reason)
          if (marked && failure.addressRejected) yield* endSubscriptionsOf(email.address)
          return
        }
        const now = yield* Clock.currentTimeMillis
        const delay = retryDelayMillis(settings.backoff, email.attempt, failure.retryAfterMillis)
        const outcome = yield* emails.markTemporaryFailure(email, {
          reason: failure.reason,
          retryAt: new Date(now + delay),
          maxAttempts: settings.maxAttempts
        })
        if (outcome === "failed") {
          yield* Effect.logWarning(`Email ${email.id} failed after ${email.attempt} attempts: ${failure.reason}`)
        }
      })

    const settle = (email: ClaimedEmail, exit: Exit.Exit<void, DeliveryFailure>) =>
      Exit.match(exit, {
        onSuccess: () => Effect.asVoid(emails.markSent(email)),
        onFailure: (cause) => {
          const failure = Cause.failureOption(cause)
          if (Option.isSome(failure)) return settleFailure(email, failure.value)
          // a provider that died is treated as one that failed for now
          return settleFailure(email, new TemporaryDeliveryFailure({ reason: Cause.pretty(cause) }))
        }
      })

    /**
     * Records the outcome, trying again while the claim holds: an email the provider took whose `sent` could not be
     * written (the database is away) would otherwise be sent again when its lease runs out. A late write is safe:
     * it changes nothing once another worker has claimed the email. Only the first try is shielded from shutdown;
     * when shutdown cuts the retries short, the batch hands the email back.
     */
    const recordOutcome = (
      email: ClaimedEmail,
      exit: Exit.Exit<void, DeliveryFailure>,
      claimedUntil: number,
      restore: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
    ) =>
      settle(email, exit).pipe(
        Effect.orElse(() =>
          Effect.flatMap(Clock.currentTimeMillis, (now) =>
            restore(settle(email, exit).pipe(
              Effect.retry(
                Schedule.exponential("100 millis").pipe(
                  Schedule.union(Schedule.spaced("2 seconds")),
                  Schedule.upTo(Duration.millis(Math.max(0, claimedUntil - now)))
                )
              )
            )))
        ),
        Effect.catchAll((error) =>
          Effect.logWarning(`Could not record the outcome of email ${email.id}; it is sent again after its lease`, error)
        )
      )

    /**
     * Sends unless half the lease is gone (false): the email is then left to be claimed again when its lease runs out,
     * so that a slow batch never sends what another worker may have claimed.
     */
    const sendWithinLease = (email: ClaimedEmail, sendBefore: number) =>
      Effect.flatMap(limiter.takeBefore(sendBefore), (inTime) =>
        inTime ? Effect.as(provider.send(outgoingEmail(email, settings)), true) : Effect.succeed(false))

    const deliverBatch = (claimed: ReadonlyArray<ClaimedEmail>, claimedAt: number) => {
      const unsettled = new Map(claimed.map((email) => [email.id, email]))
      const sendBefore = claimedAt + Duration.toMillis(settings.lease) / 2
      const claimedUntil = claimedAt + Duration.toMillis(settings.lease)
      const deliver = (email: ClaimedEmail) =>
        Effect.uninterruptibleMask((restore) =>
          restore(sendWithinLease(email, sendBefore)).pipe(
            Effect.exit,
            Effect.flatMap((exit) => {
              // interrupted: the batch hands it back
              if (Exit.isInterrupted(exit)) return Effect.void
              const forget = Effect.sync(() => unsettled.delete(email.id))
              if (Exit.isSuccess(exit) && !exit.value) return forget
              return Effect.zipRight(recordOutcome(email, Exit.asVoid(exit), claimedUntil, restore), forget)
            })
          )
        )
      return Effect.forEach(claimed, deliver, { concurrency: settings.concurrency, discard: true }).pipe(
        Effect.onInterrupt(() =>
          emails.release([...unsettled.values()]).pipe(
            Effect.catchAll((error) =>
              Effect.logWarning("Could not hand back unsent emails; they are sent when their leases run out", error)
            )
          )
        )
      )
    }

    while (true) {
      const claimedAt = yield* Clock.currentTimeMillis
      const claimed = yield* emails.claim(settings.batchSize, settings.lease)
      if (claimed.length === 0) yield* Effect.sleep(settings.pollInterval)
      else yield* deliverBatch(claimed, claimedAt)
    }
  })
