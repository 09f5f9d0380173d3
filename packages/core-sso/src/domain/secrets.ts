import { createHash, randomFillSync, timingSafeEqual } from "node:crypto"

const SECRET_BYTES = 16
// Drawn from the CSPRNG a few kilobytes at a time, each byte handed out once: a draw per secret cost more than the
// rest of making one, and a refresh grant makes two.
const randomPool = Buffer.alloc(SECRET_BYTES * 256)
let randomPoolUsed = randomPool.length

/** Client ids and secrets, codes and tokens: 32 lowercase hex characters, 128 bits from the system's CSPRNG. */
export const newSecret = (): string => {
  if (randomPoolUsed === randomPool.length) {
    randomFillSync(randomPool)
    randomPoolUsed = 0
  }
  const secret = randomPool.toString("hex", randomPoolUsed, randomPoolUsed + SECRET_BYTES)
  randomPool.fill(0, randomPoolUsed, randomPoolUsed + SECRET_BYTES)
  randomPoolUsed += SECRET_BYTES
  return secret
}

const SECRET_SHAPE = /^[0-9a-f]{32}$/

/** Whether a presented value could be a secret at all; anything else is refused without a lookup. */
export const isSecretShaped = (value: string): boolean => SECRET_SHAPE.test(value)

/** What is stored of a secret: its SHA-256, hex. Secrets themselves are shown once and never kept. */
export const hashSecret = (secret: string): string => createHash("sha256").update(secret, "utf8").digest("hex")

/** Compares a presented secret with a stored hash in constant time (both sides hashed to the same length first). */
export const matchesHash = (presented: string, storedHash: string): boolean => {
  const presentedHash = Buffer.from(hashSecret(presented), "hex")
  const stored = Buffer.from(storedHash, "hex")
  return stored.length === presentedHash.length && timingSafeEqual(presentedHash, stored)
}
