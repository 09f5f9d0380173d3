import type { BatchReport, LinkReport } from "@civicstack/core-linkcheck/api"
import { fetchHttpClient, promiseRunner } from "@civicstack/kit/sdk"
import { Effect, Layer } from "effect"
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
  const runner = promiseRunner(
    LinkcheckClient.layer({ baseUrl: options.baseUrl, bearerToken: options.bearerToken }).pipe(
      Layer.provide(fetchHttpClient(options.fetch))
    ),
    "link checking client"
  )
  const run = <A, E>(call: (client: LinkcheckClientService) => Effect.Effect<A, E>): Promise<A> =>
    runner.run(Effect.flatMap(LinkcheckClient, call))

  return {
    check: (uri, checkOptions) => run((client) => client.check(uri, checkOptions)),
    createBatch: (uris, batchOptions) => run((client) => client.createBatch(uris, batchOptions)),
    getBatch: (id) => run((client) => client.getBatch(id)),
    waitForBatch: (id, waitOptions) => run((client) => client.waitForBatch(id, waitOptions)),
    close: runner.close
  }
}
