import { describe, expect, it } from "vitest"
import { hashSecret, isSecretShaped, matchesHash, newSecret } from "../../src/domain/secrets"

describe("secrets", () => {
  it("are 32 lowercase hex digits, never repeated, across many draws from the random pool", () => {
    const secrets = Array.from({ length: 5000 }, newSecret)
    expect(secrets.every(isSecretShaped)).toBe(true)
    expect(new Set(secrets).size).toBe(secrets.length)
    // every hex digit turns up in every position: the draws are not stuck on part of the pool
    for (let position = 0; position < 32; position++) {
      expect(new Set(secrets.map((secret) => secret[position])).size).toBe(16)
    }
  })

  it("are kept as SHA-256 hashes that only the same secret matches", () => {
    const secret = newSecret()
    expect(hashSecret(secret)).toMatch(/^[0-9a-f]{64}$/)
    expect(matchesHash(secret, hashSecret(secret))).toBe(true)
    expect(matchesHash(newSecret(), hashSecret(secret))).toBe(false)
    expect(matchesHash(secret, "00")).toBe(false)
  })
})
