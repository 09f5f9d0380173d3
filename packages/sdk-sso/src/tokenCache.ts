import { createHash } from "node:crypto"

interface Entry<A> {
  readonly value: A
  readonly expiresAt: number
}

/**
 * Answers for bearer tokens, kept until `ttlMillis` has passed and evicting the least recently used beyond
 * `maxEntries`. Keys are SHA-256 digests of the tokens, so a heap dump holds no usable token.
 */
export class TokenCache<A> {
  private readonly entries = new Map<string, Entry<A>>()

  constructor(readonly ttlMillis: number, readonly maxEntries: number) {}

  static keyOf(token: string): string {
    return createHash("sha256").update(token).digest("hex")
  }

  get size(): number {
    return this.entries.size
  }

  get(key: string, now: number): A | undefined {
    const entry = this.entries.get(key)
    if (entry === undefined) return undefined
    this.entries.delete(key)
    if (now >= entry.expiresAt) return undefined
    // a Map iterates in insertion order: inserting again marks the entry most recently used
    this.entries.set(key, entry)
    return entry.value
  }

  /** Keeps `value` for the cache's lifetime, or for `ttlMillis` when that is shorter. */
  set(key: string, value: A, now: number, ttlMillis = this.ttlMillis): void {
    this.entries.delete(key)
    this.entries.set(key, { value, expiresAt: now + Math.min(ttlMillis, this.ttlMillis) })
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next()
      if (oldest.done === true) break
      this.entries.delete(oldest.value)
    }
  }

  deleteWhere(test: (value: A) => boolean): void {
    for (const [key, entry] of this.entries) if (test(entry.value)) this.entries.delete(key)
  }
}
