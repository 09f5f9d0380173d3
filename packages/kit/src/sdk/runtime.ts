import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import type * as HttpClient from "@effect/platform/HttpClient"
import { Cause, type Effect, Exit, Layer, ManagedRuntime } from "effect"

/** The `HttpClient` of the Promise APIs: `fetch`, the global one unless another is given. */
export const fetchHttpClient = (customFetch: typeof fetch | undefined): Layer.Layer<HttpClient.HttpClient> =>
  customFetch === undefined
    ? FetchHttpClient.layer
    : FetchHttpClient.layer.pipe(Layer.provide(Layer.succeed(FetchHttpClient.Fetch, customFetch)))

export interface PromiseRunner<R> {
  /** Runs the effect; a failure rejects with `rejection(error)` (by default the error itself, so `instanceof` works). */
  readonly run: <A, E>(effect: Effect.Effect<A, E, R>) => Promise<A>
  /** Later and running calls reject with an `AbortError` DOMException. */
  readonly close: () => Promise<void>
}

/** A small Effect runtime behind a Promise API; `what` names it in the `AbortError` of a closed one. */
export const promiseRunner = <R>(
  layer: Layer.Layer<R>,
  what: string,
  rejection: (error: unknown) => unknown = (error) => error
): PromiseRunner<R> => {
  const runtime = ManagedRuntime.make(layer)
  const closing = new AbortController()
  const closed = () => new DOMException(`The ${what} was closed`, "AbortError")
  return {
    run: (effect) => {
      if (closing.signal.aborted) return Promise.reject(closed())
      return runtime.runPromiseExit(effect, { signal: closing.signal }).then((exit) => {
        if (Exit.isSuccess(exit)) return exit.value
        throw Cause.isInterruptedOnly(exit.cause) ? closed() : rejection(Cause.squash(exit.cause))
      })
    },
    close: () => {
      closing.abort()
      return runtime.dispose()
    }
  }
}
