import type { QueueStats } from "@civicstack/jobs"
import { StoreError } from "@civicstack/kit"
import { Clock, Context, Duration, Effect, Either, Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import { SubscriberListNotFound, SubscriberNotFound, UnprocessableEntity } from "../api/errors"
import { normaliseAddress } from "../domain/address"
import type { EmailAddress } from "../domain/address"
import { digestJob, fanOutJob } from "../domain/jobs"
import type { SubscriberList } from "../domain/records"
import type { ListSubscriber, ListWithCounts } from "../storage/AlertsStore"
import type { EmailStatus, SingleEmail } from "../storage/EmailStore"
import type { Health, SubscriberSubscriptions } from "./Alerts"
import { Alerts } from "./Alerts"
import { AlertsParts } from "./AlertsParts"
import type { DeliveryFailure } from "./EmailProvider"
import { EmailProvider } from "./EmailProvider"

export type { ListSubscriber, ListWithCounts }

export interface ListSubscribers {
  readonly list: SubscriberList
  /** Active subscriptions, by subscriber id. */
  readonly subscribers: ReadonlyArray<ListSubscriber>
}

/** Jobs of one queue that are not done: waiting (runnable now or later, retries included), running, or dead. */
export interface JobFigures {
  readonly waiting: number
  readonly running: number
  /** Gave up after their last attempt; they stay until someone looks. */
  readonly dead: number
}

export interface QueueReport {
  readonly emails: Readonly<Record<EmailStatus, number>>
  /** Of the oldest pending email, digests included; null when none is pending. */
  readonly oldestPendingAge: Duration.Duration | null
  readonly fanOutJobs: JobFigures
  readonly digestJobs: JobFigures
  readonly health: Health
}

export interface QueuedTestEmail {
  readonly id: string
  readonly address: EmailAddress
}

export interface SentTestEmail {
  readonly id: string
  readonly address: EmailAddress
  readonly provider: string
}

export const TEST_EMAIL_SUBJECT = "civicstack email alerts: test email"

/** The address, or a 422 naming `field` with what is wrong with it. */
const checkedAddress = (field: string, address: string): Effect.Effect<EmailAddress, UnprocessableEntity> =>
  Either.match(normaliseAddress(address), {
    onLeft: (invalid) =>
      Effect.fail(new UnprocessableEntity({ error: `${field}: ${invalid.problem}`, details: { [field]: [invalid.problem] } })),
    onRight: Effect.succeed
  })

/** The test email to `address`, refused (422, field `to`) when it is not an email address. */
export const testEmail = (address: string): Effect.Effect<SingleEmail & { readonly address: EmailAddress }, UnprocessableEntity> =>
  Effect.map(checkedAddress("to", address), (checked) => ({
    address: checked,
    subject: TEST_EMAIL_SUBJECT,
    body: [
      "This is a test email from the civicstack email alert service.",
      "",
      "An operator sent it to check the email provider settings. Nothing needs doing."
    ].join("\n")
  }))

/**
 * Sends the test email to `address` now, through the `EmailProvider` given, without the queue: the provider's
 * failure (temporary or permanent, with its reason) comes out as it was.
 */
export const sendTestEmail = (
  address: string
): Effect.Effect<SentTestEmail, UnprocessableEntity | DeliveryFailure, EmailProvider> =>
  Effect.gen(function*() {
    const email = yield* testEmail(address)
    const provider = yield* EmailProvider
    const id = randomUUID()
    yield* provider.send({ id, address: email.address, subject: email.subject, body: email.body })
    return { id, address: email.address, provider: provider.name }
  })


const jobFigures = (stats: ReadonlyArray<QueueStats>, queue: string): JobFigures => {
  const found = stats.find((entry) => entry.queue === queue)
  return found === undefined
    ? { waiting: 0, running: 0, dead: 0 }
    : { waiting: found.queued + found.scheduled, running: found.running, dead: found.dead }
}

const make = Effect.gen(function*() {
  const { emailStore, jobs, store } = yield* AlertsParts
  const alerts = yield* Alerts

  const subscribersOf = (slug: string) =>
    Effect.gen(function*() {
      const list = yield* alerts.listBySlug(slug)
      return { list, subscribers: yield* store.activeSubscribersOf(list.id) }
    })

  const subscriberByAddress = (address: string) =>
    Effect.gen(function*() {
      const checked = yield* checkedAddress("address", address)
      const found = yield* store.subscriberByAddress(checked)
      if (Option.isNone(found)) return yield* new SubscriberNotFound({ error: "Could not find the subscriber" })
      return { subscriber: found.value, subscriptions: yield* store.activeSubscriptionsOf(found.value.id) }
    })

  const queueTestEmail = (address: string) =>
    Effect.gen(function*() {
      const email = yield* testEmail(address)
      const id = yield* emailStore.queueEmail(email)
      return { id, address: email.address }
    })

  const queue = Effect.gen(function*() {
    const figures = yield* emailStore.statusFigures
    const stats = yield* jobs.stats.pipe(
      Effect.mapError((cause) => new StoreError({ message: "alerts operations: job figures failed", cause }))
    )
    const now = yield* Clock.currentTimeMillis
    const since = figures.oldestPendingSince
    return {
      emails: figures.counts,
      oldestPendingAge: since === null ? null : Duration.millis(Math.max(0, now - since.getTime())),
      fanOutJobs: jobFigures(stats, fanOutJob.queue),
      digestJobs: jobFigures(stats, digestJob.queue),
      health: yield* alerts.health
    }
  })

  return {
    lists: store.listsWithCounts,
    subscribersOf,
    subscriberByAddress,
    queueTestEmail,
    queue,
    reclaimAfterRestart: emailStore.expireClaims
  }
})

/**
 * What operators read about one email alert service (its lists, subscribers and queue), and the test email they
 * queue to check the provider. Built by `layerSql` and `layerMemory` alongside `Alerts`.
 */
export class AlertsOperations extends Context.Tag("@civicstack/core-alerts/AlertsOperations")<AlertsOperations, {
  /** Every list, by slug, with its active subscriptions counted by frequency. */
  readonly lists: Effect.Effect<ReadonlyArray<ListWithCounts>, StoreError>
  readonly subscribersOf: (slug: string) => Effect.Effect<ListSubscribers, SubscriberListNotFound | StoreError>
  /** The subscriber with this address (case-insensitive), deactivated or not, with their active subscriptions. */
  readonly subscriberByAddress: (
    address: string
  ) => Effect.Effect<SubscriberSubscriptions, SubscriberNotFound | UnprocessableEntity | StoreError>
  /** Queues the test email as a single email, as the auth-token email is; the workers send it. */
  readonly queueTestEmail: (address: string) => Effect.Effect<QueuedTestEmail, UnprocessableEntity | StoreError>
  readonly queue: Effect.Effect<QueueReport, StoreError>
  /**
   * Makes the emails claimed by stopped processes due at once, instead of after their lease. Only for a database one
   * process uses (the embedded one), at that process's start; answers how many there were.
   */
  readonly reclaimAfterRestart: Effect.Effect<number, StoreError>
}>() {
  /** The operators' side of the service, over the parts that `layerSql` or `layerMemory` built. */
  static readonly layer: Layer.Layer<AlertsOperations, never, AlertsParts | Alerts> = Layer.effect(AlertsOperations, make)
}
