import { Duration } from "effect"
import type { EmailLink, User } from "./records"

/** Whether a user may be sent a link of this purpose; the reason not, otherwise. */
export const linkRefusedFor = (purpose: EmailLink["purpose"], user: User): string | undefined =>
  user.isApiUser
    ? "an API user has no password"
    : user.suspendedAt !== null
    ? "the user is suspended"
    : purpose === "invitation" && user.passwordHash !== null
    ? "the user has already chosen a password"
    : undefined

/** `2 hours`, `7 days`: how long a link works, as its email says. */
export const lifetimeInWords = (lifetime: Duration.Duration) => {
  const hours = Math.round(Duration.toHours(lifetime))
  if (hours < 1) return `${Math.max(1, Math.round(Duration.toMinutes(lifetime)))} minutes`
  return hours % 24 === 0 && hours >= 48 ? `${hours / 24} days` : hours === 1 ? "1 hour" : `${hours} hours`
}

/**
 * The email of a link. It holds no text a user or an administrator chose (a name could carry Markdown, and with it a
 * link of its own): only the sign-on's own URL and the link.
 */
export const emailLinkMessage = (purpose: EmailLink["purpose"], url: string, lifetime: Duration.Duration, site: string) =>
  purpose === "invitation"
    ? {
      subject: "You are invited to sign in",
      body: [
        `An administrator has made you an account on the sign-on at ${site}.`,
        `[Choose your password](${url})`,
        `The link works once, for ${lifetimeInWords(lifetime)}. If you did not expect this email, you can ignore it.`
      ].join("\n\n")
    }
    : {
      subject: "Reset your password",
      body: [
        `Someone asked to reset the password of your account on the sign-on at ${site}.`,
        `[Choose a new password](${url})`,
        `The link works once, for ${lifetimeInWords(lifetime)}. If you did not ask, you can ignore this email: your password stays as it is.`
      ].join("\n\n")
    }
