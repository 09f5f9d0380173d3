import { Clock, Duration, Effect, Metric, Option } from "effect"
import { TooManyAuthTokens } from "../api/errors"
import { isSitePath, SITE_PATH_PROBLEM } from "../api/requests"
import { siteUrl, withQueryParameter } from "../domain/links"
import { authTokensThrottled } from "../domain/metrics"
import type { Frequency } from "../domain/records"
import type { AlertsParts } from "./AlertsParts"
import {
  authTokenEmail,
  authTokenLink,
  signAuthToken,
  signSubscriptionToken,
  SUBSCRIPTION_AUTHENTICATE_PATH,
  subscriptionConfirmationEmail
} from "./authToken"
import { checkedAddress, isSlug, listNotFound, orFail, refused, subscriberNotFound } from "./refusals"

export interface AuthTokenRequest {
  readonly address: string
  /** A path on the public site (`/email/manage?x=1`); the link goes there with `token` added to its query. */
  readonly destination: string
  /** A path on the public site for after authenticating; carried in the token. */
  readonly redirect?: string | null | undefined
  /** Who asks (`Caller`'s uid): each caller's requests count against `authTokenLimit.perCaller`. */
  readonly caller: string
}

export interface SubscriptionConfirmationRequest {
  readonly address: string
  /** The list's slug. */
  readonly topicId: string
  readonly frequency: Frequency
  /** Who asks: counted with its auth-token requests against `authTokenLimit.perCaller`. */
  readonly caller: string
}

/**
 * The emails that ask an address's owner to confirm something with a signed link: managing their subscriptions
 * (`sendAuthToken`) and subscribing (`sendSubscriptionConfirmation`). Both count against the same limits: a
 * caller's requests an hour, then the emails of that kind one address was sent within the hour.
 */
export const makeConfirmations = ({ emails, settings, store }: AlertsParts["Type"]) => {
  const { perAddress, perCaller, window } = settings.authTokenLimit
  const { authToken: authTokenWording, subscriptionConfirmation: subscriptionWording } = settings.wording

  /** Whole seconds, at least one, until `instant`: a `Retry-After`. */
  const secondsUntil = (instant: Date) =>
    Effect.map(Clock.currentTimeMillis, (at) => Math.max(1, Math.ceil((instant.getTime() - at) / 1000)))

  /** Counts the request against its caller's allowance, before any address is looked up. */
  const useCallerAllowance = (caller: string) =>
    Effect.gen(function*() {
      const callers = yield* store.useAllowance(`auth-token:${caller}`, perCaller, window)
      if (callers.granted) return
      yield* Metric.increment(Metric.tagged(authTokensThrottled, "limit", "caller"))
      return yield* new TooManyAuthTokens({
        error: `This caller asked for ${perCaller} emails to confirm addresses within ${Duration.format(window)}; try again later`,
        retryAfterSeconds: yield* secondsUntil(callers.renewsAt)
      })
    })

  /** Refused once `address` was sent `perAddress` emails with `subject` within the window. */
  const checkAddressAllowance = (address: string, subject: string) =>
    Effect.gen(function*() {
      const at = yield* Clock.currentTimeMillis
      const recent = yield* emails.queuedSince(address, subject, new Date(at - Duration.toMillis(window)))
      if (recent.count < perAddress || recent.oldest === null) return at
      yield* Metric.increment(Metric.tagged(authTokensThrottled, "limit", "address"))
      return yield* new TooManyAuthTokens({
        error: `This address was sent ${perAddress} emails to confirm it within ${Duration.format(window)}; try again later`,
        retryAfterSeconds: yield* secondsUntil(new Date(recent.oldest.getTime() + Duration.toMillis(window)))
      })
    })

  const sendAuthToken = ({ address, caller, destination, redirect }: AuthTokenRequest) =>
    Effect.gen(function*() {
      const checked = yield* checkedAddress("address", address)
      const badPaths = Object.fromEntries(
        [["destination", destination] as const, ["redirect", redirect ?? null] as const]
          .filter(([, path]) => path !== null && !isSitePath(path))
          .map(([field]) => [field, SITE_PATH_PROBLEM])
      )
      if (Object.keys(badPaths).length > 0) return yield* refused(badPaths)
      yield* useCallerAllowance(caller)
      return yield* store.transaction(Effect.gen(function*() {
        const found = yield* Effect.flatMap(store.subscriberByAddress(checked), orFail(subscriberNotFound))
        // requests for one address count one after another, each seeing the emails of those before it
        yield* store.lockSubscriber(found.id)
        const at = yield* checkAddressAllowance(found.address, authTokenWording.subject)
        const subscriber = Option.getOrElse(yield* store.reactivateSubscriber(found.id), () => found)
        const issuedAt = Math.floor(at / 1000)
        const token = yield* Effect.promise(() =>
          signAuthToken(
            { subscriberId: subscriber.id, redirect: redirect ?? null, issuer: settings.authTokenIssuer, issuedAt },
            settings.authTokenSecret
          )
        )
        const link = authTokenLink(settings.publicSiteUrl, destination, token)
        yield* emails.queue(authTokenEmail(subscriber.address, link, authTokenWording))
        return subscriber
      }))
    })

  /**
   * Emails a link to `SUBSCRIPTION_AUTHENTICATE_PATH` on the public site whose token holds the address, the list's
   * slug and the frequency. No subscriber or subscription is stored: the site makes the subscription once the token
   * comes back to it.
   */
  const sendSubscriptionConfirmation = ({ address, caller, frequency, topicId }: SubscriptionConfirmationRequest) =>
    Effect.gen(function*() {
      // one address whatever its case, as subscribers are: so the limit counts every spelling of it
      const checked = (yield* checkedAddress("address", address)).toLowerCase()
      yield* useCallerAllowance(caller)
      const list = isSlug(topicId) ? yield* Effect.flatMap(store.listBySlug(topicId), orFail(listNotFound)) : yield* listNotFound
      const at = yield* checkAddressAllowance(checked, subscriptionWording.subject)
      const token = yield* Effect.promise(() =>
        signSubscriptionToken(
          { address: checked, topicId: list.slug, frequency, issuer: settings.authTokenIssuer, issuedAt: Math.floor(at / 1000) },
          settings.authTokenSecret
        )
      )
      const link = withQueryParameter(siteUrl(settings.publicSiteUrl, SUBSCRIPTION_AUTHENTICATE_PATH), "token", token)
      yield* emails.queue(subscriptionConfirmationEmail(checked, list.title, frequency, link, subscriptionWording))
    })

  return { sendAuthToken, sendSubscriptionConfirmation }
}
