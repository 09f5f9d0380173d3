import type { BatchReport, LinkReport } from "@civicstack/core-linkcheck/api"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { Cause, Effect, Exit, Layer, ManagedRuntime } from "effect"
import {
  type CheckOptions,
  type CreateBatchOptions,
  type CreatedBatchReport,
  LinkcheckClient,
  type LinkcheckClientService,
  type WaitForBatchOptions
} from "./LinkcheckClient"

export interface CreateLinkcheckClientOptions {
  /** Where the link checking API is served, e.g. `https://links.example.org`. */
  readonly baseUrl: string | URL
  /** An API token of the single sign-on whose user has `signin` on `link-checker-api`, sent as a bearer token. */
  readonly bearerToken?: string | undefined
  /** Used instead of the global `fetch` (for proxies, tests, or runtimes that bring their own). */
  readonly fetch?: typeof fetch | undefined
}

/**
 * The link checking API with Promises. A rejected call throws the same error classes as the Effect client
 * (`InvalidRequest`, `BatchNotFound`, `Unauthenticated`, `Forbidden`, `LinkcheckClientError`, `WaitTimeout`), so `instanceof` works.
 * Each client holds a small Effect runtime: make one per service address and `close()` it when done.
 */
export interface LinkcheckPromiseClient {
  readonly check: (uri: string, options?: CheckOptions) => Promise<LinkReport>
  readonly createBatch: (uris: ReadonlyArray<string>, options?: CreateBatchOptions) => Promise<CreatedBatchReport>
  readonly getBatch: (id: number) => Promise<BatchReport>
  readonly waitForBatch: (id: number, options?: WaitForBatchOptions) => Promise<BatchReport>
  /** Releases the client; calls still running and calls made afterwards reject with an `AbortError` DOMException. */
  readonly close: () => Promise<void>
}

export const createLinkcheckClient = (options: CreateLinkcheckClientOptions): LinkcheckPromiseClient => {
  const httpClient = options.fetch === undefined
    ? FetchHttpClient.layer
    : FetchHttpClient.layer.pipe(Layer.provide(Layer.succeed(FetchHttpClient.Fetch, options.fetch)))
  const runtime = ManagedRuntime.make(
    LinkcheckClient.layer({ baseUrl: options.baseUrl, bearerToken: options.bearerToken }).pipe(Layer.provide(httpClient))
  )

  const closing = new AbortController()
  const closed = () => new DOMException("The link checking client was closed", "AbortError")

  const run = <A, E>(call: (client: LinkcheckClientService) => Effect.Effect<A, E>): Promise<A> => {
    if (closing.signal.aborted) return Promise.reject(closed())
    return runtime.runPromiseExit(Effect.flatMap(LinkcheckClient, call), { signal: closing.signal }).then((exit) => {
      if (Exit.isSuccess(exit)) return exit.value
      throw Cause.isInterruptedOnly(exit.cause) ? closed() : Cause.squash(exit.cause)
    })
  }

  return {
    check: (uri, checkOptions) => run((client) => client.check(uri, checkOptions)),
    createBatch: (uris, batchOptions) => run((client) => client.createBatch(uris, batchOptions)),
    getBatch: (id) => run((client) => client.getBatch(id)),
    waitForBatch: (id, waitOptions) => run((client) => client.waitForBatch(id, waitOptions)),
    close: () => {
      closing.abort()
      return runtime.dispose()
    }
  }
}
