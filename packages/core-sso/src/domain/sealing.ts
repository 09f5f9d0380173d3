import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto"

/** What a sealed value starts with; a stored value without it is plaintext written before sealing. */
const PREFIX = "sealed.v1."

/**
 * Seals the secrets the SSO must keep readable (its signing keys, its push users' tokens) with AES-256-GCM under the
 * first of its keys, and opens what any of them sealed, so that keys can be rotated: seal under a new key, keep the
 * old one until everything is sealed again.
 */
export interface Sealer {
  readonly seal: (plain: string) => string
  /** The plaintext of a stored value; fails (throws) on a value sealed under none of the keys, or altered. */
  readonly open: (stored: string) => string
  /** Whether a stored value is sealed under the key that seals now (otherwise it should be sealed again). */
  readonly isCurrent: (stored: string) => boolean
}

/** A short public name of a key, stored with what it sealed so that the right key is tried. */
export const keyIdOf = (key: Uint8Array) => createHash("sha256").update(key).digest("hex").slice(0, 8)

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64url")

export const makeSealer = (keys: ReadonlyArray<Uint8Array>): Sealer => {
  if (keys.length === 0) {
    return { seal: (plain) => plain, open: (stored) => stored, isCurrent: (stored) => !stored.startsWith(PREFIX) }
  }
  for (const key of keys) if (key.length !== 32) throw new Error("An encryption key must be 32 bytes")
  const byId = new Map(keys.map((key) => [keyIdOf(key), key]))
  const currentId = keyIdOf(keys[0]!)
  return {
    seal: (plain) => {
      const iv = randomBytes(12)
      const cipher = createCipheriv("aes-256-gcm", keys[0]!, iv)
      const sealed = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()])
      return `${PREFIX}${currentId}.${b64(iv)}.${b64(cipher.getAuthTag())}.${b64(sealed)}`
    },
    open: (stored) => {
      if (!stored.startsWith(PREFIX)) return stored
      const [keyId, iv, tag, sealed] = stored.slice(PREFIX.length).split(".")
      const key = byId.get(keyId ?? "")
      if (key === undefined || iv === undefined || tag === undefined || sealed === undefined) {
        throw new Error(`A secret in the database is sealed under key ${keyId}, which is not among the encryption keys`)
      }
      const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"))
      decipher.setAuthTag(Buffer.from(tag, "base64url"))
      return Buffer.concat([decipher.update(Buffer.from(sealed, "base64url")), decipher.final()]).toString("utf8")
    },
    isCurrent: (stored) => stored.startsWith(`${PREFIX}${currentId}.`)
  }
}
