import { Duration, Redacted } from "effect"
import { SignJWT } from "jose"
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
