import { Cause, Clock, Duration, Effect, Either, Exit, Fiber, Metric, Option, Queue, Schedule } from "effect"
import type { SharedEmailContent } from "../domain/compose"
import { immediateEmailBody } from "../domain/compose"
import { unsubscribeUrlPrefix } from "../domain/links"
import type { DeliveryFailure, OutgoingEmail } from "../services/EmailProvider"
import { EmailProvider, PermanentDeliveryFailure, TemporaryDeliveryFailure } from "../services/EmailProvider"
import type { DeliverySettings } from "../settings"
import { AlertsStore } from "../storage/AlertsStore"
import type { ClaimedEmail } from "../storage/EmailStore"
import { EmailStore } from "../storage/EmailStore"
import { DeliveryPause } from "../services/DeliveryPause"
import { makeRateLimiter } from "./rateLimiter"
import { makeTurnGate } from "./turnGate"
import { emailAttempts } from "../domain/metrics"

/** The wait before the attempt after `attempt`, at least what the provider asked for. */
export const retryDelayMillis = (
  backoff: DeliverySettings["backoff"],
  attempt: number,
  retryAfterMillis: number | undefined
) => {
  const exponential = Math.min(Duration.toMillis(backoff.max), Duration.toMillis(backoff.base) * 2 ** (attempt - 1))
  return Math.max(exponential, retryAfterMillis ?? 0)
}

/** The notifications whose shared content the claimed emails need, each once. */
export const sharedContentIds = (claimed: ReadonlyArray<ClaimedEmail>) => [
  ...new Set(claimed.flatMap(({ body }) => body._tag === "AroundSharedContent" ? [body.notificationId] : []))
]

/**
 * The message of a claimed email: its own body, or its unsubscribe lines inside its notification's shared content
 * (from `contents`). Fails for good when that content is gone, which retention does only once no email refers to it.
 */
export const outgoingEmail = (
  email: ClaimedEmail,
  contents: ReadonlyMap<string, SharedEmailContent>,
  settings: Pick<DeliverySettings, "publicSiteUrl">
): Either.Either<OutgoingEmail, PermanentDeliveryFailure> => {
  const { body } = email
  const content = body._tag === "AroundSharedContent" ? contents.get(body.notificationId) : undefined
  if (body._tag === "AroundSharedContent" && content === undefined) {
    return Either.left(new PermanentDeliveryFailure({
      reason: `the content of notification ${body.notificationId} is not stored`,
      addressRejected: false
    }))
  }
  const base = {
    id: email.id,
    address: email.address,
    subject: email.subject,
    body: body._tag === "Whole" ? body.text : immediateEmailBody(content!, body.unsubscribeLines)
  }
  return Either.right(
    email.subscriptionIds.length === 1
      ? { ...base, unsubscribeUrl: `${unsubscribeUrlPrefix(settings)}${email.subscriptionIds[0]}` }
      : base
  )
}

const countAttempt = (outcome: "sent" | "retrying" | "failed" | "sender_refused") =>
  Metric.increment(Metric.tagged(emailAttempts, "outcome", outcome))

/**
 * Claims due emails in batches and hands them to the `EmailProvider` under the rate limit, until interrupted.
 * A temporary failure is tried again later (with backoff, or when the provider said); a permanent one fails the email,
 * and when the address was refused, ends every active subscription of it (`non_existent_email`). When interrupted, emails not yet sent go
 * back to pending; after a crash, the lease of claimed emails runs out and another worker claims them.
 */
export const runDeliveryWorker = (
  settings: DeliverySettings,
  /** Succeeds when new emails may be due (fan-out wrote some): the worker then looks before its next poll. */
  emailsQueued: Effect.Effect<void> = Effect.never
) =>
  Effect.gen(function*() {
    const emails = yield* EmailStore
    const alerts = yield* AlertsStore
    const provider = yield* EmailProvider
    const pause = yield* DeliveryPause
    const limiter = yield* makeRateLimiter(settings.rateLimitPerSecond)
    const turns = yield* makeTurnGate(settings.sendsPerTurn)

    const endSubscriptionsOf = (address: string) =>
      Effect.flatMap(alerts.subscriberByAddress(address), (subscriber) =>
        Option.isNone(subscriber)
          ? Effect.void
          : Effect.asVoid(alerts.deactivateSubscriber(subscriber.value.id, "non_existent_email")))

    const settleFailure = (email: ClaimedEmail, failure: DeliveryFailure) =>
      Effect.gen(function*() {
        if (failure._tag === "PermanentDeliveryFailure") {
          yield* countAttempt("failed")
          yield* Effect.logWarning(`Email ${email.id} refused for good: ${failure.reason}`)
          const marked = yield* emails.markPermanentFailure(email, failure.reason)
          if (marked && failure.addressRejected) yield* endSubscriptionsOf(email.address)
          return
        }
        const now = yield* Clock.currentTimeMillis
        if (failure.senderRefused === true) {
          // not the email's fault: it goes back without using an attempt, and delivery stops for a while
          yield* countAttempt("sender_refused")
          yield* pause.pause(new Date(now + Duration.toMillis(settings.senderRefusalPause)), failure.reason)
          return yield* emails.release([email])
        }
        const delay = retryDelayMillis(settings.backoff, email.attempt, failure.retryAfterMillis)
        const outcome = yield* emails.markTemporaryFailure(email, {
          reason: failure.reason,
          retryAt: new Date(now + delay),
          maxAttempts: settings.maxAttempts
        })
        yield* countAttempt(outcome === "failed" ? "failed" : "retrying")
        if (outcome === "failed") {
          yield* Effect.logWarning(`Email ${email.id} failed after ${email.attempt} attempts: ${failure.reason}`)
        }
      })

    const settle = (email: ClaimedEmail, cause: Cause.Cause<DeliveryFailure>) => {
      const failure = Cause.failureOption(cause)
      if (Option.isSome(failure)) return settleFailure(email, failure.value)
      // a provider that died is treated as one that failed for now
      return settleFailure(email, new TemporaryDeliveryFailure({ reason: Cause.pretty(cause) }))
    }

    /**
     * Writes an outcome, trying again while the claim holds: an email the provider took whose `sent` could not be
     * written (the database is away) would otherwise be sent again when its lease runs out. A late write is safe:
     * it changes nothing once another worker has claimed the email. Only the first try is shielded from shutdown;
     * when shutdown cuts the retries short, the batch hands the emails back.
     */
    const recordOutcome = <E>(
      what: string,
      write: Effect.Effect<void, E>,
      claimedUntil: number,
      restore: <A, E2, R>(effect: Effect.Effect<A, E2, R>) => Effect.Effect<A, E2, R>
    ) =>
      write.pipe(
        Effect.orElse(() =>
          Effect.flatMap(Clock.currentTimeMillis, (now) =>
            restore(write.pipe(
              Effect.retry(
                Schedule.exponential("100 millis").pipe(
                  Schedule.union(Schedule.spaced("2 seconds")),
                  Schedule.upTo(Duration.millis(Math.max(0, claimedUntil - now)))
                )
              )
            )))
        ),
        Effect.catchAll((error) =>
          Effect.logWarning(`Could not record the outcome of ${what}; sent again after the lease`, error)
        )
      )

    /**
     * Sends a batch on `concurrency` lanes (fibers that each take the next email). The emails the provider took are
     * marked sent together by one recorder fiber, when `sentFlushSize` of them wait or every `sentFlushInterval`, and
     * once more at the end of the batch; failures are settled email by email. A lane waits before it sends while
     * `concurrency + sentFlushSize` emails are in flight or not yet marked, so that a crash can have the provider
     * send no more than that many again, however slow the marking. When interrupted, sends in progress finish, what
     * was sent is marked (one try) and the emails not settled go back to pending.
     */
    const deliverBatch = (
      claimed: ReadonlyArray<ClaimedEmail>,
      contents: ReadonlyMap<string, SharedEmailContent>,
      claimedAt: number
    ) =>
      Effect.gen(function*() {
        const unsettled = new Map(claimed.map((email) => [email.id, email]))
        const sendBefore = claimedAt + Duration.toMillis(settings.lease) / 2
        const claimedUntil = claimedAt + Duration.toMillis(settings.lease)
        /** Taken by the provider, not yet marked sent. */
        let sent: Array<ClaimedEmail> = []
        const takeSent = () => {
          const taken = sent
          sent = []
          return taken
        }
        const forget = (settled: ReadonlyArray<ClaimedEmail>) =>
          Effect.sync(() => {
            for (const email of settled) unsettled.delete(email.id)
          })
        /** true: the lanes are done, flush and stop; false: enough are waiting, flush now. */
        const wake = yield* Queue.sliding<boolean>(1)
        /** A permit per email handed to the provider, given back once it is marked or settled. */
        const unrecorded = yield* Effect.makeSemaphore(settings.concurrency + settings.sentFlushSize)

        const flush = Effect.uninterruptibleMask((restore) =>
          Effect.suspend(() => {
            const taken = takeSent()
            if (taken.length === 0) return Effect.void
            return Effect.zipRight(
              recordOutcome(`${taken.length} sent email(s)`, emails.markSentMany(taken), claimedUntil, restore),
              forget(taken)
            ).pipe(Effect.ensuring(unrecorded.release(taken.length)))
          })
        )
        const recorder = Effect.gen(function*() {
          while (true) {
            const finished = yield* Queue.take(wake).pipe(
              Effect.timeoutTo({ duration: settings.sentFlushInterval, onSuccess: (done) => done, onTimeout: () => false })
            )
            yield* flush
            if (finished) return
          }
        })

        /**
         * Sends unless half the lease is gone: the email is then left to be claimed again when its lease runs out, so
         * that a slow batch never sends what another worker may have claimed. Only the waits before the send can be
         * interrupted (the batch then hands the email back): a send once started finishes, bounded by the provider's
         * timeouts, since the provider may take an email whose send was abandoned, which would then go out twice.
         */
        const deliver = (email: ClaimedEmail) =>
          Effect.uninterruptibleMask((restore) =>
            Effect.gen(function*() {
              const admitted = yield* Effect.exit(restore(
                unrecorded.take(1).pipe(Effect.zipRight(turns.pass), Effect.zipRight(limiter.takeBefore(sendBefore)))
              ))
              if (Exit.isFailure(admitted)) return
              if (!admitted.value) return yield* Effect.zipRight(forget([email]), unrecorded.release(1))
              if ((yield* pause.remainingMillis) > 0) {
                // delivery paused while this batch was on its way: the rest goes back, no attempt used
                return yield* emails.release([email]).pipe(
                  Effect.ignoreLogged,
                  Effect.zipRight(forget([email])),
                  Effect.ensuring(unrecorded.release(1))
                )
              }
              const exit = yield* Effect.exit(Effect.flatMap(outgoingEmail(email, contents, settings), provider.send).pipe(
                Effect.withSpan("alerts.send_email", { attributes: { "email.id": email.id, "email.provider": provider.name } })
              ))
              if (Exit.isSuccess(exit)) {
                yield* countAttempt("sent")
                sent.push(email)
                if (sent.length >= settings.sentFlushSize) yield* Queue.offer(wake, false)
                return
              }
              yield* Effect.zipRight(
                recordOutcome(`email ${email.id}`, settle(email, exit.cause), claimedUntil, restore),
                forget([email])
              ).pipe(Effect.ensuring(unrecorded.release(1)))
            })
          )
        let next = 0
        const lane = Effect.whileLoop({
          while: () => next < claimed.length,
          body: () => deliver(claimed[next++]!),
          step: () => {}
        })

        const recording = yield* Effect.fork(recorder)
        const lanes = yield* Effect.forEach(
          Array.from({ length: Math.max(1, Math.min(settings.concurrency, claimed.length)) }, () => lane),
          Effect.fork
        )
        yield* Fiber.joinAll(lanes).pipe(
          Effect.zipRight(Queue.offer(wake, true)),
          Effect.zipRight(Fiber.join(recording)),
          // the lanes' sends in progress finish before what was sent is marked and the rest handed back
          Effect.onInterrupt(() =>
            Fiber.interruptAll(lanes).pipe(
              Effect.zipRight(Fiber.interrupt(recording)),
              Effect.zipRight(Effect.suspend(() => {
                const taken = takeSent()
                return taken.length === 0 ? Effect.void : Effect.zipRight(emails.markSentMany(taken), forget(taken))
              })),
              Effect.catchAll((error) => Effect.logWarning("Could not record sent emails while stopping", error)),
              Effect.zipRight(Effect.suspend(() => emails.release([...unsettled.values()]))),
              Effect.catchAll((error) =>
                Effect.logWarning("Could not hand back unsent emails; they are sent when their leases run out", error)
              )
            )
          )
        )
      })

    while (true) {
      const paused = yield* pause.remainingMillis
      if (paused > 0) {
        yield* Effect.sleep(Duration.millis(paused))
        continue
      }
      const claimedAt = yield* Clock.currentTimeMillis
      const claimed = yield* emails.claim(settings.batchSize, settings.lease)
      if (claimed.length === 0) {
        yield* Effect.raceFirst(Effect.sleep(settings.pollInterval), emailsQueued)
        continue
      }
      // read once per batch, not once per email: the content is most of each email's body
      const contents = yield* emails.contentsOf(sharedContentIds(claimed)).pipe(
        Effect.tapError(() => Effect.ignoreLogged(emails.release(claimed)))
      )
      yield* deliverBatch(claimed, contents, claimedAt).pipe(
        Effect.withSpan("alerts.deliver_emails", { attributes: { "emails.claimed": claimed.length } })
      )
    }
  })
