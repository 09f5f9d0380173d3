import { Duration, Redacted } from "effect"
import { SignJWT } from "jose"
import { escapeLinkText } from "../domain/bodyParts"
import type { Frequency } from "../domain/records"
import { siteUrl, withQueryParameter } from "../domain/links"
import type { SingleEmail } from "../storage/EmailStore"

/** How long the link in an auth-token email works. */
export const AUTH_TOKEN_LIFETIME = Duration.days(7)

export const AUTH_TOKEN_SUBJECT = "Confirm your email address"

export interface AuthTokenClaims {
  readonly subscriberId: number
  readonly redirect: string | null
  readonly issuer: string
  /** Seconds since the epoch. */
  readonly issuedAt: number
}

/** `{"data": {"subscriber_id", "redirect"}, "exp", "iat", "iss"}`, signed with HS256. */
export const signAuthToken = (claims: AuthTokenClaims, secret: Redacted.Redacted<string>): Promise<string> =>
  new SignJWT({ data: { subscriber_id: claims.subscriberId, redirect: claims.redirect } })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuer(claims.issuer)
    .setIssuedAt(claims.issuedAt)
    .setExpirationTime(claims.issuedAt + Duration.toSeconds(AUTH_TOKEN_LIFETIME))
    .sign(new TextEncoder().encode(Redacted.value(secret)))

/** `{publicSiteUrl}{destination}` with `token=<token>` added to the destination's own query, which stays as written. */
export const authTokenLink = (publicSiteUrl: string, destination: string, token: string): string =>
  withQueryParameter(siteUrl(publicSiteUrl, destination), "token", token)

/** The email that carries the link, in plain words (Markdown). */
export const authTokenEmail = (address: string, link: string): SingleEmail => ({
  address,
  subject: AUTH_TOKEN_SUBJECT,
  body: [
    "Someone asked to manage the email alerts sent to this address. If it was you, confirm your email address:",
    "",
    `[Confirm your email address](${link})`,
    "",
    `The link works for ${Duration.toDays(AUTH_TOKEN_LIFETIME)} days.`,
    "",
    "If you did not ask for this, you can ignore this email."
  ].join("\n")
})

export const SUBSCRIPTION_CONFIRMATION_SUBJECT = "Confirm that you want to get emails"

/** Where the public site checks a subscription's token, then creates the subscription (`POST /subscriptions`). */
export const SUBSCRIPTION_AUTHENTICATE_PATH = "/email/subscriptions/authenticate"

export interface SubscriptionTokenClaims {
  readonly address: string
  /** The list's slug. */
  readonly topicId: string
  readonly frequency: Frequency
  readonly issuer: string
  /** Seconds since the epoch. */
  readonly issuedAt: number
}

/** `{"data": {"address", "topic_id", "frequency"}, "exp", "iat", "iss"}`, signed with HS256: nothing is stored. */
export const signSubscriptionToken = (claims: SubscriptionTokenClaims, secret: Redacted.Redacted<string>): Promise<string> =>
  new SignJWT({ data: { address: claims.address, topic_id: claims.topicId, frequency: claims.frequency } })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuer(claims.issuer)
    .setIssuedAt(claims.issuedAt)
    .setExpirationTime(claims.issuedAt + Duration.toSeconds(AUTH_TOKEN_LIFETIME))
    .sign(new TextEncoder().encode(Redacted.value(secret)))

const FREQUENCY_WORDS: Record<Frequency, string> = {
  immediately: "as soon as there is an update",
  daily: "once a day, when there are updates",
  weekly: "once a week, when there are updates"
}

/** The email that asks the address's owner to confirm a subscription, in plain words (Markdown). */
export const subscriptionConfirmationEmail = (
  address: string,
  listTitle: string,
  frequency: Frequency,
  link: string
): SingleEmail => ({
  address,
  subject: SUBSCRIPTION_CONFIRMATION_SUBJECT,
  body: [
    `Someone asked for emails about "${escapeLinkText(listTitle)}" to be sent to this address, ${
      FREQUENCY_WORDS[frequency]
    }. If it was you, confirm that you want them:`,
    "",
    `[Confirm that you want to get emails](${link})`,
    "",
    `The link works for ${Duration.toDays(AUTH_TOKEN_LIFETIME)} days. Nothing is sent until you confirm.`,
    "",
    "If you did not ask for this, you can ignore this email."
  ].join("\n")
})
