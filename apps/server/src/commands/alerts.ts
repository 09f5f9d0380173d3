import * as Alerts from "@civicstack/core-alerts"
import { SubscriberListNotFound, SubscriberNotFound, UnprocessableEntity } from "@civicstack/core-alerts/api"
import { Command, Options } from "@effect/cli"
import { Console, Duration, Effect, Layer, Option } from "effect"
import { json, print, quietLogsOnStderr } from "./output"
import { databaseWithJobsLayer } from "../app"
import { parseServerConfig } from "../config"
import { alertsServiceLayer } from "../services/alerts"

const loadConfig = Effect.suspend(() => parseServerConfig(process.env))

/** The email alert service over the server's database (DATA_DIR or DATABASE_URL), migrated. No workers run here. */
const alertsOnServerDatabase = Layer.unwrapEffect(
  Effect.map(loadConfig, (config) => alertsServiceLayer(config).pipe(Layer.provide(databaseWithJobsLayer(config))))
)

class Refused {
  constructor(readonly message: string) {}
}

const isRefusal = (error: unknown): error is SubscriberListNotFound | SubscriberNotFound | UnprocessableEntity | Refused =>
  error instanceof SubscriberListNotFound || error instanceof SubscriberNotFound ||
  error instanceof UnprocessableEntity || error instanceof Refused

/** Refusals (an unknown list or subscriber, a bad address, wrong options) say why on stderr and exit with code 2. */
const refusalsExit2 = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A | void, E, R> =>
  Effect.catchAll(effect, (error) =>
    isRefusal(error)
      ? Console.error(error instanceof Refused ? error.message : error.error).pipe(
        Effect.zipRight(Effect.sync(() => { process.exitCode = 2 }))
      )
      : Effect.fail(error))

/** Runs a command on the server's database. */
const run = <A>(effect: Effect.Effect<A, unknown, Alerts.AlertsOperations>) =>
  refusalsExit2(effect).pipe(
    Effect.provide(alertsOnServerDatabase),
    // outermost, so that opening the database logs to stderr too
    Effect.provide(quietLogsOnStderr)
  )


const operations = Alerts.AlertsOperations

const listJson = (list: Alerts.SubscriberList) => ({ id: list.id, slug: list.slug, title: list.title })
const iso = (date: Date | null) => date?.toISOString() ?? null

const describeCounts = (counts: Readonly<Record<Alerts.Frequency, number>>) =>
  `immediately ${counts.immediately}, daily ${counts.daily}, weekly ${counts.weekly}`

const lists = Command.make("lists", { json }, (options) =>
  run(Effect.gen(function*() {
    const found = yield* (yield* operations).lists
    yield* print(
      options.json,
      {
        subscriber_lists: found.map(({ activeSubscriptions, list }) => ({
          ...listJson(list),
          active_subscribers: activeSubscriptions
        }))
      },
      found.length === 0
        ? ["No subscriber lists"]
        : found.map(({ activeSubscriptions, list }) =>
          `${list.slug}  ${list.title}  (id ${list.id})  active: ${describeCounts(activeSubscriptions)}`
        )
    )
  }))).pipe(Command.withDescription("List every subscriber list with its active subscribers by frequency"))

const describeSubscriber = (subscriber: Alerts.Subscriber) =>
  `${subscriber.address}  (subscriber ${subscriber.id})${
    subscriber.deactivatedAt === null ? "" : `  deactivated ${subscriber.deactivatedAt.toISOString()}`
  }`

const subscriberJson = (subscriber: Alerts.Subscriber) => ({
  id: subscriber.id,
  address: subscriber.address,
  deactivated_at: iso(subscriber.deactivatedAt),
  created_at: subscriber.createdAt.toISOString()
})

const subscriptionJson = (subscription: Alerts.Subscription) => ({
  id: subscription.id,
  frequency: subscription.frequency,
  source: subscription.source,
  created_at: subscription.createdAt.toISOString()
})

const subscribersOfList = (slug: string, asJson: boolean) =>
  Effect.gen(function*() {
    const { list, subscribers } = yield* (yield* operations).subscribersOf(slug)
    yield* print(
      asJson,
      {
        subscriber_list: listJson(list),
        subscribers: subscribers.map(({ subscriber, subscription }) => ({
          ...subscriberJson(subscriber),
          subscription: subscriptionJson(subscription)
        }))
      },
      [
        `${list.title} (${list.slug}): ${subscribers.length} active subscriber${subscribers.length === 1 ? "" : "s"}`,
        ...subscribers.map(({ subscriber, subscription }) =>
          `  ${subscriber.address}  ${subscription.frequency}  subscriber ${subscriber.id}  subscription ${subscription.id}`
        )
      ]
    )
  })

const subscriberWithSubscriptions = (address: string, asJson: boolean) =>
  Effect.gen(function*() {
    const { subscriber, subscriptions } = yield* (yield* operations).subscriberByAddress(address)
    yield* print(
      asJson,
      {
        subscriber: subscriberJson(subscriber),
        subscriptions: subscriptions.map(({ list, subscription }) => ({
          ...subscriptionJson(subscription),
          subscriber_list: listJson(list)
        }))
      },
      [
        describeSubscriber(subscriber),
        ...(subscriptions.length === 0
          ? ["  no active subscriptions"]
          : subscriptions.map(({ list, subscription }) =>
            `  ${list.slug}  ${list.title}  ${subscription.frequency}  subscription ${subscription.id}`
          ))
      ]
    )
  })

const subscribers = Command.make("subscribers", {
  list: Options.text("list").pipe(Options.optional, Options.withDescription("a list's slug: its active subscribers")),
  address: Options.text("address").pipe(Options.optional, Options.withDescription("one subscriber and their subscriptions")),
  json
}, (options) =>
  run(Option.match(options.list, {
    onSome: (slug) =>
      Option.isSome(options.address)
        ? Effect.fail(new Refused("Give --list or --address, not both"))
        : subscribersOfList(slug, options.json),
    onNone: () =>
      Option.match(options.address, {
        onSome: (address) => subscriberWithSubscriptions(address, options.json),
        onNone: () => Effect.fail(new Refused("Give --list <slug> or --address <address>"))
      })
  }))).pipe(Command.withDescription("A list's active subscribers (--list), or one subscriber with their subscriptions (--address)"))

/** Sends in this process through the configured provider; exit code 1 when the provider fails. */
const sendNow = (to: string, asJson: boolean) =>
  Effect.gen(function*() {
    const config = yield* loadConfig
    const outcome = yield* Alerts.sendTestEmail(to).pipe(
      Effect.either,
      Effect.provide(Alerts.emailProviderLayer(config.email.provider))
    )
    if (outcome._tag === "Right") {
      const sent = outcome.right
      return yield* print(asJson, { sent: true, id: sent.id, address: sent.address, provider: sent.provider }, [
        `Sent test email ${sent.id} to ${sent.address} through the ${sent.provider} provider`
      ])
    }
    const failure = outcome.left
    if (failure._tag === "UnprocessableEntity") return yield* failure
    const kind = failure._tag === "PermanentDeliveryFailure" ? "permanent" : "temporary"
    yield* print(asJson, { sent: false, provider: config.email.provider._tag, failure: kind, reason: failure.reason }, [
      `Not sent: the ${config.email.provider._tag} provider failed (${kind}): ${failure.reason}`
    ])
    yield* Effect.sync(() => { process.exitCode = 1 })
  }).pipe(refusalsExit2, Effect.provide(quietLogsOnStderr))

const sendTest = Command.make("send-test", {
  to: Options.text("to").pipe(Options.withDescription("the address to send the test email to")),
  now: Options.boolean("now").pipe(
    Options.withDescription("send it from this process through the configured provider, and say how it went")
  ),
  json
}, (options) =>
  options.now
    ? sendNow(options.to, options.json)
    : run(Effect.gen(function*() {
      const queued = yield* (yield* operations).queueTestEmail(options.to)
      yield* print(options.json, { queued: true, id: queued.id, address: queued.address }, [
        `Queued test email ${queued.id} to ${queued.address}; the server's workers send it`
      ])
    }))).pipe(Command.withDescription("Queue a test email to check the email provider settings (--now: send it at once)"))

const describeJobs = (figures: Alerts.JobFigures) =>
  `${figures.waiting} waiting, ${figures.running} running, ${figures.dead} dead`

const queue = Command.make("queue", { json }, (options) =>
  run(Effect.gen(function*() {
    const report = yield* (yield* operations).queue
    const ageSeconds = report.oldestPendingAge === null ? null : Math.round(Duration.toSeconds(report.oldestPendingAge))
    const { emails, health } = report
    yield* print(
      options.json,
      {
        emails,
        oldest_pending_email_age_seconds: ageSeconds,
        fan_out_jobs: report.fanOutJobs,
        digest_jobs: report.digestJobs,
        health: { status: health.status, queue_size: health.queueSize, queue_age: health.queueAge }
      },
      [
        `emails: ${emails.pending} pending, ${emails.sending} sending, ${emails.sent} sent, ${emails.failed} failed`,
        `oldest pending email: ${ageSeconds === null ? "none pending" : `${ageSeconds} s`}`,
        `fan-out jobs: ${describeJobs(report.fanOutJobs)}`,
        `digest jobs: ${describeJobs(report.digestJobs)}`,
        `health: ${health.status} (queue size ${health.queueSize}, queue age ${health.queueAge})`
      ]
    )
  }))).pipe(Command.withDescription("The email queue: emails by status, oldest pending age, fan-out and digest jobs, health"))

export const alertsCommand = Command.make("alerts").pipe(
  Command.withDescription("Email alert operations on the server's database (DATA_DIR or DATABASE_URL)"),
  Command.withSubcommands([lists, subscribers, sendTest, queue])
)
