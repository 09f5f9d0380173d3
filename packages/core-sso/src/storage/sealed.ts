import { Effect, Option } from "effect"
import type { Sealer } from "../domain/sealing"
import type { SigningKey, TwoStep } from "../domain/records"
import type { PushCredential, SsoStore } from "./SsoStore"
import { StoreError } from "./SsoStore"

type Store = SsoStore["Type"]

/** A sealed private key is stored as `{ "sealed": "<sealed JSON>" }`; any other object is one stored in the clear. */
const sealedText = (jwk: SigningKey["privateJwk"]) => (typeof jwk["sealed"] === "string" ? jwk["sealed"] : undefined)

const opened = <A>(operation: string, open: () => A) =>
  Effect.try({
    try: open,
    catch: (cause) => new StoreError({ message: `sso: ${operation}: ${(cause as Error).message}`, cause })
  })

/**
 * `store` with the signing keys' private parts, the push tokens and the TOTP secrets sealed by `sealer` as they are written and opened
 * as they are read: the services see plaintext, the database holds none.
 */
export const sealedStore = (store: Store, sealer: Sealer): Store => {
  const openKey = (key: SigningKey): SigningKey => {
    const text = sealedText(key.privateJwk)
    return text === undefined ? key : { ...key, privateJwk: JSON.parse(sealer.open(text)) }
  }
  const openCredential = (credential: PushCredential): PushCredential => ({ ...credential, token: sealer.open(credential.token) })
  const openTwoStep = <A extends Pick<TwoStep, "secret">>(twoStep: A): A => ({ ...twoStep, secret: sealer.open(twoStep.secret) })
  return {
    ...store,
    signingKeys: Effect.flatMap(store.signingKeys, (keys) => opened("signingKeys", () => keys.map(openKey))),
    insertSigningKey: (key) =>
      store.insertSigningKey({ ...key, privateJwk: { sealed: sealer.seal(JSON.stringify(key.privateJwk)) } }),
    pushCredential: (applicationId) =>
      Effect.flatMap(store.pushCredential(applicationId), (found) => opened("pushCredential", () => Option.map(found, openCredential))),
    allPushCredentials: Effect.flatMap(store.allPushCredentials, (all) => opened("allPushCredentials", () => all.map(openCredential))),
    savePushCredential: (credential) => store.savePushCredential({ ...credential, token: sealer.seal(credential.token) }),
    twoStepOf: (uid) => Effect.flatMap(store.twoStepOf(uid), (found) => opened("twoStepOf", () => Option.map(found, openTwoStep))),
    beginTwoStep: (uid, secret) =>
      Effect.flatMap(store.beginTwoStep(uid, sealer.seal(secret)), (begun) => opened("beginTwoStep", () => openTwoStep(begun))),
    twoStepSecrets: Effect.flatMap(store.twoStepSecrets, (all) => opened("twoStepSecrets", () => all.map(openTwoStep))),
    replaceTwoStepSecret: (uid, secret) => store.replaceTwoStepSecret(uid, sealer.seal(secret))
  }
}

/**
 * Seals again, under the key that seals now, every stored secret that is in the clear or sealed under an older key;
 * `store` is the store as it is stored (not `sealedStore`'s view). Run at start, after the migrations.
 */
export const resealStored = (store: Store, sealer: Sealer) =>
  Effect.gen(function*() {
    let resealed = 0
    for (const key of yield* store.signingKeys) {
      const text = sealedText(key.privateJwk) ?? JSON.stringify(key.privateJwk)
      if (sealer.isCurrent(text)) continue
      const plain = yield* opened("resealStored", () => sealer.open(text))
      yield* store.replacePrivateJwk(key.kid, { sealed: sealer.seal(plain) })
      resealed++
    }
    for (const credential of yield* store.allPushCredentials) {
      if (sealer.isCurrent(credential.token)) continue
      const token = yield* opened("resealStored", () => sealer.open(credential.token))
      yield* store.savePushCredential({ ...credential, token: sealer.seal(token) })
      resealed++
    }
    for (const { secret, userUid } of yield* store.twoStepSecrets) {
      if (sealer.isCurrent(secret)) continue
      const plain = yield* opened("resealStored", () => sealer.open(secret))
      yield* store.replaceTwoStepSecret(userUid, sealer.seal(plain))
      resealed++
    }
    return resealed
  })
