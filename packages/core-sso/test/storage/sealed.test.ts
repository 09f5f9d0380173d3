import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { randomBytes } from "node:crypto"
import { makeSealer } from "../../src/domain/sealing"
import { layerMemory } from "../../src/storage/memory"
import { resealStored, sealedStore } from "../../src/storage/sealed"
import { SsoStore } from "../../src/storage/SsoStore"

const oldKey = randomBytes(32)
const newKey = randomBytes(32)

const signingKey = {
  kid: "k1",
  privateJwk: { kty: "EC", d: "the private part" },
  publicJwk: { kty: "EC", x: "public" },
  createdAt: new Date(0),
  retiredAt: null
}
const credential = { applicationId: "app-1", tokenId: "t1", token: "the push token", expiresAt: new Date(1000) }
const totpSecret = "JBSWY3DPEHPK3PXPJBSWY3DP"

/** Everything as the database holds it, as one text. */
const storedText = Effect.gen(function*() {
  const store = yield* SsoStore
  return JSON.stringify([yield* store.signingKeys, yield* store.allPushCredentials, yield* store.twoStepSecrets])
})

describe("sealed secrets", () => {
  it("seals with AES-256-GCM: nothing readable is stored, a changed byte does not open, a random IV each time", () => {
    const sealer = makeSealer([newKey])
    const sealed = sealer.seal("the push token")
    expect(sealed).not.toContain("push")
    expect(sealer.open(sealed)).toBe("the push token")
    expect(sealer.seal("the push token")).not.toBe(sealed)
    const secondToLast = sealed.at(-2)
    const altered = `${sealed.slice(0, -2)}${secondToLast === "A" ? "B" : "A"}${sealed.slice(-1)}`
    expect(() => sealer.open(altered)).toThrow()
    expect(() => makeSealer([oldKey]).open(sealed)).toThrow(/not among the encryption keys/)
  })

  it.effect("the services read and write plaintext while the store holds only sealed values", () =>
    Effect.gen(function*() {
      const stored = yield* SsoStore
      const store = sealedStore(stored, makeSealer([newKey]))
      yield* store.insertSigningKey(signingKey)
      yield* store.savePushCredential(credential)
      expect((yield* store.beginTwoStep("u1", totpSecret)).secret).toBe(totpSecret)
      expect(yield* store.signingKeys).toEqual([signingKey])
      expect(yield* store.pushCredential("app-1")).toEqual(Option.some(credential))
      expect(Option.getOrThrow(yield* store.twoStepOf("u1")).secret).toBe(totpSecret)
      const text = yield* storedText
      expect(text).not.toContain("the private part")
      expect(text).not.toContain("the push token")
      expect(text).not.toContain(totpSecret)
    }).pipe(Effect.provide(layerMemory())))

  it.effect("sealing again takes what was stored in the clear, and then what an old key sealed, to the new key", () =>
    Effect.gen(function*() {
      const stored = yield* SsoStore
      yield* stored.insertSigningKey(signingKey)
      yield* stored.savePushCredential(credential)
      yield* stored.beginTwoStep("u1", totpSecret)
      expect(yield* resealStored(stored, makeSealer([oldKey]))).toBe(3)
      expect(yield* storedText).not.toContain("the private part")
      expect(yield* storedText).not.toContain(totpSecret)
      // rotation: the new key seals, the old one still opens until everything is sealed again
      const rotated = makeSealer([newKey, oldKey])
      expect(yield* resealStored(stored, rotated)).toBe(3)
      expect(yield* resealStored(stored, rotated)).toBe(0)
      const withNewKeyOnly = sealedStore(stored, makeSealer([newKey]))
      expect(yield* withNewKeyOnly.signingKeys).toEqual([signingKey])
      expect(yield* withNewKeyOnly.pushCredential("app-1")).toEqual(Option.some(credential))
      expect(Option.getOrThrow(yield* withNewKeyOnly.twoStepOf("u1")).secret).toBe(totpSecret)
    }).pipe(Effect.provide(layerMemory())))

  it.effect("a secret sealed under a key that is gone fails loudly, naming the problem", () =>
    Effect.gen(function*() {
      const stored = yield* SsoStore
      yield* sealedStore(stored, makeSealer([oldKey])).savePushCredential(credential)
      const failure = yield* Effect.flip(sealedStore(stored, makeSealer([newKey])).pushCredential("app-1"))
      expect(failure.message).toMatch(/not among the encryption keys/)
    }).pipe(Effect.provide(layerMemory())))
})
