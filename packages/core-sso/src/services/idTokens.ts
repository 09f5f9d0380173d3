import { now } from "@civicstack/kit"
import { Duration, Effect, Option } from "effect"
import type { Context } from "effect"
import { exportJWK, generateKeyPair, importJWK, SignJWT } from "jose"
import type { JWK } from "jose"
import { randomUUID } from "node:crypto"
import type { SigningKey } from "../domain/records"
import type { SsoStore, StoreError } from "../storage/SsoStore"

const ALGORITHM = "RS256"

/** How long a copy signs with the key it knows before it looks again for one a rotation elsewhere made. */
const KEY_CACHE = Duration.minutes(1)

export interface IdTokenClaims {
  readonly issuer: string
  readonly subject: string
  readonly clientId: string
  readonly nonce: string | null
  readonly authTime: Date
  readonly lifetime: Duration.Duration
  readonly extra: Readonly<Record<string, unknown>>
}

export interface IdTokens {
  readonly sign: (claims: IdTokenClaims) => Effect.Effect<string, StoreError>
  /** The public keys that may have signed a live id_token: the current one and those retired within `lifetime`. */
  readonly publicKeys: (lifetime: Duration.Duration) => Effect.Effect<ReadonlyArray<JWK>, StoreError>
  /** A new key signs from now on; the old ones stay published while their tokens may live. */
  readonly rotate: Effect.Effect<string, StoreError>
}

const newKey = Effect.gen(function*() {
  const { privateKey, publicKey } = yield* Effect.promise(() => generateKeyPair(ALGORITHM, { extractable: true }))
  const kid = randomUUID()
  const describe = { kid, alg: ALGORITHM, use: "sig" }
  return {
    kid,
    privateJwk: { ...(yield* Effect.promise(() => exportJWK(privateKey))), ...describe },
    publicJwk: { ...(yield* Effect.promise(() => exportJWK(publicKey))), ...describe },
    createdAt: yield* now,
    retiredAt: null
  } satisfies SigningKey
})

/** id_tokens signed with RS256 by a key pair made at first use and kept in storage, shared by every copy. */
export const makeIdTokens = (store: Context.Tag.Service<SsoStore>): IdTokens => {
  let cached: { readonly key: SigningKey; readonly signer: CryptoKey | Uint8Array; readonly readAt: number } | undefined

  const currentKey = (keys: ReadonlyArray<SigningKey>) => Option.fromNullable(keys.find((key) => key.retiredAt === null))

  const activeKey = store.exclusively(Effect.gen(function*() {
    const existing = currentKey(yield* store.signingKeys)
    if (Option.isSome(existing)) return existing.value
    const key = yield* newKey
    yield* store.insertSigningKey(key)
    return key
  }))

  const signer = Effect.gen(function*() {
    const at = (yield* now).getTime()
    if (cached !== undefined && at - cached.readAt < Duration.toMillis(KEY_CACHE)) return cached
    const known = currentKey(yield* store.signingKeys)
    const key = Option.isSome(known) ? known.value : yield* activeKey
    const imported = yield* Effect.promise(() => importJWK(key.privateJwk as JWK, ALGORITHM))
    cached = { key, signer: imported, readAt: at }
    return cached
  })

  return {
    sign: (claims) =>
      Effect.gen(function*() {
        const { key, signer: privateKey } = yield* signer
        const issuedAt = Math.floor((yield* now).getTime() / 1000)
        const token = new SignJWT({
          ...claims.extra,
          azp: claims.clientId,
          auth_time: Math.floor(claims.authTime.getTime() / 1000),
          ...(claims.nonce === null ? {} : { nonce: claims.nonce })
        })
          .setProtectedHeader({ alg: ALGORITHM, kid: key.kid, typ: "JWT" })
          .setIssuer(claims.issuer)
          .setSubject(claims.subject)
          .setAudience(claims.clientId)
          .setIssuedAt(issuedAt)
          .setExpirationTime(issuedAt + Math.round(Duration.toSeconds(claims.lifetime)))
        return yield* Effect.promise(() => token.sign(privateKey))
      }),
    publicKeys: (lifetime) =>
      Effect.gen(function*() {
        const at = (yield* now).getTime()
        let keys = yield* store.signingKeys
        if (Option.isNone(currentKey(keys))) {
          yield* activeKey
          keys = yield* store.signingKeys
        }
        return keys
          .filter((key) => key.retiredAt === null || key.retiredAt.getTime() + Duration.toMillis(lifetime) > at)
          .map((key) => key.publicJwk as JWK)
      }),
    rotate: store.exclusively(Effect.gen(function*() {
      const key = yield* newKey
      yield* store.insertSigningKey(key)
      yield* store.retireSigningKeys(key.kid, yield* now)
      cached = undefined
      return key.kid
    }))
  }
}
