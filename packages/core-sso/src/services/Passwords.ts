import { hash, verify } from "@node-rs/argon2"
import { Context, Effect, Layer } from "effect"

/** `Algorithm.Argon2id`, a const enum that isolated modules cannot read. */
const ARGON2ID = 2

export const MIN_PASSWORD_LENGTH = 10
export const MAX_PASSWORD_LENGTH = 128

/** Why a new password is refused, or `undefined`. */
export const passwordProblem = (password: string): string | undefined =>
  password.length < MIN_PASSWORD_LENGTH
    ? `must be at least ${MIN_PASSWORD_LENGTH} characters`
    : password.length > MAX_PASSWORD_LENGTH
    ? `must be at most ${MAX_PASSWORD_LENGTH} characters`
    : undefined

/**
 * argon2id hashing on libuv's threads, at most `concurrency` at once. `verifyOrDummy` does the same work whether or
 * not there is a stored hash, so a sign-in for an unknown email takes as long as one for a known email.
 */
export class Passwords extends Context.Tag("@civicstack/core-sso/Passwords")<Passwords, {
  readonly hash: (password: string) => Effect.Effect<string>
  readonly verifyOrDummy: (storedHash: string | null, password: string) => Effect.Effect<boolean>
}>() {
  static readonly layer = (options: { readonly concurrency: number }) =>
    Layer.effect(
      Passwords,
      Effect.gen(function*() {
        const permits = yield* Effect.makeSemaphore(options.concurrency)
        const limited = <A>(work: () => Promise<A>) => permits.withPermits(1)(Effect.promise(work))
        const hashOf = (password: string) => limited(() => hash(password, { algorithm: ARGON2ID }))
        const dummyHash = yield* hashOf("not a password anybody has: dummy for unknown accounts")
        const verifyWith = (storedHash: string, password: string) =>
          limited(() => verify(storedHash, password).catch(() => false))
        return {
          hash: hashOf,
          verifyOrDummy: (storedHash, password) =>
            storedHash === null
              ? Effect.as(verifyWith(dummyHash, password), false)
              : verifyWith(storedHash, password)
        }
      })
    )
}
