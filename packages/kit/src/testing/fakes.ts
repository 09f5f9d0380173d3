import type { AccessCheck } from "../access"
import { Forbidden, Unauthenticated } from "../access"
import { Effect, Layer, Redacted } from "effect"
import type { Context } from "effect"

/** The one token a fake service accepts, and one whose user it knows but who may not use its API. */
export const FAKE_TOKEN = "fake-token"
export const FORBIDDEN_TOKEN = "fake-token-without-signin"

/** The caller `FAKE_TOKEN` stands for. */
export const FAKE_CALLER = { uid: "fake-caller", permissions: ["signin"] } as const

/** An API's access as the SSO would check it, for fakes: `FAKE_TOKEN` passes, `FORBIDDEN_TOKEN` gets 403, others 401. */
export const fakeTokenAccess = <Self>(tag: Context.Tag<Self, AccessCheck>, application: string): Layer.Layer<Self> =>
  Layer.succeed(tag, {
    bearer: (token) => {
      const presented = Redacted.value(token)
      return presented === FAKE_TOKEN
        ? Effect.succeed(FAKE_CALLER)
        : presented === FORBIDDEN_TOKEN
        ? Effect.fail(new Forbidden({ error: `No signin permission on ${application}` }))
        : Effect.fail(new Unauthenticated({ error: "A valid bearer token is required" }))
    }
  })

/** A `fetch` that never answers, and a promise kept once it was called: for tests of what `close()` does in flight. */
export const fetchThatHangs = () => {
  let called: () => void = () => undefined
  const wasCalled = new Promise<void>((resolve) => {
    called = resolve
  })
  const fetch = () => {
    called()
    return new Promise<Response>(() => undefined)
  }
  return { fetch, wasCalled }
}
