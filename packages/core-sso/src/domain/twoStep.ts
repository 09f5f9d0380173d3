import { randomInt } from "node:crypto"
import { Secret, TOTP } from "otpauth"

/** RFC 6238 as authenticator apps expect it: SHA-1, six digits, 30-second steps. */
const PERIOD_SECONDS = 30
const DIGITS = 6

const totpOf = (secret: string, account = "", issuer = "") =>
  new TOTP({ issuer, label: account, secret: Secret.fromBase32(secret), algorithm: "SHA1", digits: DIGITS, period: PERIOD_SECONDS })

/** A new TOTP secret: 160 random bits, base32 as apps take it typed in. */
export const newTotpSecret = (): string => new Secret({ size: 20 }).base32

/** Whether `secret` is base32 of at least 80 bits, as a bootstrap file's `otp_secret` must be. */
export const isTotpSecret = (secret: string): boolean => /^[A-Z2-7]{16,}=*$/.test(secret)

/** The `otpauth://` URI an app scans from the set-up page's QR code. */
export const totpUri = (secret: string, account: string, issuer: string): string => totpOf(secret, account, issuer).toString()

/** The code of `secret` at `nowMillis`: what an app shows (tests and the bootstrap's automated sign-ins). */
export const totpCode = (secret: string, nowMillis: number): string => totpOf(secret).generate({ timestamp: nowMillis })

/**
 * The time step `code` belongs to, when it is the code of `secret` for the step of `nowMillis` or one either side (a
 * clock a little off) and comes after `lastStep`, the step of the last code accepted, so that a code works once.
 */
export const acceptedStep = (
  secret: string,
  code: string,
  nowMillis: number,
  lastStep: number | null
): number | undefined => {
  const token = code.replace(/\s/g, "")
  if (!new RegExp(`^\\d{${DIGITS}}$`).test(token)) return undefined
  const delta = totpOf(secret).validate({ token, timestamp: nowMillis, window: 1 })
  if (delta === null) return undefined
  const step = Math.floor(nowMillis / 1000 / PERIOD_SECONDS) + delta
  return lastStep !== null && step <= lastStep ? undefined : step
}

const RECOVERY_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"
const RECOVERY_LETTERS = 16

const grouped = (letters: string) => letters.match(/.{1,4}/g)!.join("-")

/**
 * Ten single-use recovery codes, `xxxx-xxxx-xxxx-xxxx` from an alphabet without look-alikes: about 79 bits each, so
 * that their stored hashes cannot be reversed by trying every code.
 */
export const newRecoveryCodes = (): ReadonlyArray<string> =>
  Array.from({ length: 10 }, () =>
    grouped(Array.from({ length: RECOVERY_LETTERS }, () => RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)]).join("")))

/** A recovery code as typed (any case, spaces or dashes anywhere), in the form whose hash is stored. */
export const normalisedRecoveryCode = (typed: string): string => {
  const letters = typed.toLowerCase().replace(/[\s-]/g, "")
  return letters.length === RECOVERY_LETTERS ? grouped(letters) : letters
}

/** Whether `typed` could be a recovery code rather than an app's six digits. */
export const looksLikeRecoveryCode = (typed: string): boolean => normalisedRecoveryCode(typed).length === RECOVERY_LETTERS + 3
