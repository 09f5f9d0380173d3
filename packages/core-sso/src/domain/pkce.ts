import { createHash } from "node:crypto"

/** RFC 7636 section 4.1: 43 to 128 unreserved characters. */
const VERIFIER_SHAPE = /^[A-Za-z0-9\-._~]{43,128}$/

/** An S256 challenge is the base64url SHA-256 of a verifier: always 43 characters. */
const CHALLENGE_SHAPE = /^[A-Za-z0-9\-_]{43}$/

export const isCodeChallenge = (challenge: string): boolean => CHALLENGE_SHAPE.test(challenge)

export const isCodeVerifier = (verifier: string): boolean => VERIFIER_SHAPE.test(verifier)

export const challengeOf = (verifier: string): string => createHash("sha256").update(verifier, "ascii").digest("base64url")

/** Whether `verifier` answers the S256 `challenge` a grant was bound to. */
export const verifierAnswers = (verifier: string, challenge: string): boolean =>
  isCodeVerifier(verifier) && challengeOf(verifier) === challenge
