import { Duration, Redacted } from "effect"
import { SignJWT } from "jose"
import { escapeLinkText } from "../domain/bodyParts"
import type { Frequency } from "../domain/records"
import { siteUrl, withQueryParameter } from "../domain/links"
import type { ConfirmationWording } from "../settings"
import type { SingleEmail } from "../storage/EmailStore"

/** How long the link in an auth-token email works. */
export const AUTH_TOKEN_LIFETIME = Duration.days(7)

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

/** An email whose link does what its subject says: the lead, the link under the subject's words, how long it works. */
const confirmationEmail = (address: string, wording: ConfirmationWording, link: string, afterLink: string): SingleEmail => ({
  address,
  subject: wording.subject,
  body: [
    wording.lead,
    "",
    `[${escapeLinkText(wording.subject)}](${link})`,
    "",
    `The link works for ${Duration.toDays(AUTH_TOKEN_LIFETIME)} days.${afterLink}`,
    "",
    "If you did not ask for this, you can ignore this email."
  ].join("\n")
})

/** The email that carries the link to manage one's subscriptions. */
export const authTokenEmail = (address: string, link: string, wording: ConfirmationWording): SingleEmail =>
  confirmationEmail(address, wording, link, "")

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

/** The email that asks the address's owner to confirm a subscription to the list titled `listTitle`. */
export const subscriptionConfirmationEmail = (
  address: string,
  listTitle: string,
  frequency: Frequency,
  link: string,
  wording: ConfirmationWording
): SingleEmail =>
  confirmationEmail(
    address,
    {
      ...wording,
      // one pass, so that a title holding `{frequency}` stays as written
      lead: wording.lead.replace(/\{(list|frequency)\}/g, (_, name: string) =>
        name === "list" ? escapeLinkText(listTitle) : FREQUENCY_WORDS[frequency])
    },
    link,
    " Nothing is sent until you confirm."
  )
