import {
  type BatchNotFound,
  type BatchReport,
  CheckParams,
  CreateBatchBody,
  type Forbidden,
  type InvalidRequest,
  LinkcheckApi,
  type LinkReport,
  type Priority,
  type Unauthenticated
} from "@civicstack/core-linkcheck/api"
import { failureMapping, ClientTag } from "@civicstack/kit/sdk"
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { Duration, Effect, Redacted, Schedule, Schema } from "effect"
import { LinkcheckClientError, WaitTimeout } from "./errors"
import { invalidRequestFromIssues, invalidRequestFromParseError } from "./invalidRequest"

export interface LinkcheckClientOptions {
  /** Where the link checking API is served, e.g. `https://links.example.org` (a path prefix is kept). */
  readonly baseUrl: string | URL
  /**
   * Sent as `Authorization: Bearer <token>`: an API token of the single sign-on whose user has `signin` on
   * `link-checker-api`. Without one the service answers `Unauthenticated`, unless its host lets every caller in.
   */
  readonly bearerToken?: string | Redacted.Redacted<string> | undefined
}

/** The service refused the caller: no or a bad token (`Unauthenticated`, 401), or no permission (`Forbidden`, 403). */
export type AccessRefused = Unauthenticated | Forbidden

export interface CheckOptions {
  /** Seconds into the past in which a stored check is still good; 0 forces a new check. The service's default is 14400. */
  readonly checkedWithin?: number | undefined
  /** Check during the request instead of queueing the check; may be slow or time out. */
  readonly synchronous?: boolean | undefined
  /**
   * Look the uri's `#fragment` up among its HTML page's `id`s and `<a name>`s (a missing one is a "Missing section"
   * warning). The service's own setting (`LINKCHECK_FRAGMENTS`, default on) when not given.
   */
  readonly checkFragments?: boolean | undefined
}

export interface CreateBatchOptions {
  /** Seconds into the past in which a stored check is still good; 0 forces every link to be checked again. */
  readonly checkedWithin?: number | undefined
  /** `low` is for bulk submissions, so that interactive use is served first. The service's default is `high`. */
  readonly priority?: Priority | undefined
  /** An absolute http(s) URL the service POSTs the completed BatchReport to. */
  readonly webhookUri?: string | undefined
  /** Key of the webhook's HMAC-SHA1 signature; check it with `verifyWebhookSignature`. */
  readonly webhookSecretToken?: string | undefined
  /** Look the uris' `#fragment`s up on their HTML pages; the service's own setting when not given. */
  readonly checkFragments?: boolean | undefined
}

export interface WaitForBatchOptions {
  /** Time between two reads of the batch. Default 2 seconds. */
  readonly pollInterval?: Duration.DurationInput | undefined
  /** Give up with `WaitTimeout` after this long. Default: wait until the batch completes. */
  readonly timeout?: Duration.DurationInput | undefined
}

/** A new batch's report; `completedAtOnce` is true when the service answered 201 (every link already had a result). */
export type CreatedBatchReport = BatchReport & { readonly completedAtOnce: boolean }

export interface LinkcheckClientService {
  readonly check: (
    uri: string,
    options?: CheckOptions
  ) => Effect.Effect<LinkReport, InvalidRequest | AccessRefused | LinkcheckClientError>
  readonly createBatch: (
    uris: ReadonlyArray<string>,
    options?: CreateBatchOptions
  ) => Effect.Effect<CreatedBatchReport, InvalidRequest | AccessRefused | LinkcheckClientError>
  readonly getBatch: (id: number) => Effect.Effect<BatchReport, BatchNotFound | AccessRefused | LinkcheckClientError>
  /** Reads the batch until it is completed, first at once and then every `pollInterval`. */
  readonly waitForBatch: (
    id: number,
    options?: WaitForBatchOptions
  ) => Effect.Effect<BatchReport, BatchNotFound | AccessRefused | LinkcheckClientError | WaitTimeout>
}

const DEFAULT_POLL_INTERVAL: Duration.DurationInput = "2 seconds"

const refineFailures = failureMapping({
  service: "the link checking service",
  clientError: (fields) => new LinkcheckClientError(fields),
  // the service refused the request with the platform's own 400 body rather than the error envelope
  platformRefusal: (error) => invalidRequestFromIssues(error.issues)
})

/**
 * Requests are decoded with the contract's own schemas before they are sent, so a bad argument fails here with an
 * `InvalidRequest` naming the field, as the service would refuse it, and the service's defaults are filled in.
 */
const decodeRequest = <A, I>(schema: Schema.Schema<A, I>, wireShape: I): Effect.Effect<A, InvalidRequest> =>
  Effect.mapError(Schema.decode(schema)(wireShape), invalidRequestFromParseError)

/** Builds a client of the API at `options.baseUrl` on the `HttpClient` in context. */
export const makeLinkcheckClient = (
  options: LinkcheckClientOptions
): Effect.Effect<LinkcheckClientService, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const token = options.bearerToken
    const api = yield* HttpApiClient.make(LinkcheckApi, {
      baseUrl: options.baseUrl,
      ...(token === undefined
        ? {}
        : { transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(Redacted.isRedacted(token) ? token : Redacted.make(token))) })
    })

    const check: LinkcheckClientService["check"] = (uri, checkOptions = {}) =>
      decodeRequest(CheckParams, {
        uri,
        ...(checkOptions.checkedWithin === undefined ? {} : { checked_within: String(checkOptions.checkedWithin) }),
        ...(checkOptions.synchronous === undefined ? {} : { synchronous: checkOptions.synchronous ? "true" : "false" }),
        ...(checkOptions.checkFragments === undefined
          ? {}
          : { check_fragments: checkOptions.checkFragments ? "true" : "false" })
      }).pipe(Effect.flatMap((urlParams) => refineFailures(api.linkcheck.check({ urlParams }))))

    const createBatch: LinkcheckClientService["createBatch"] = (uris, batchOptions = {}) =>
      decodeRequest(CreateBatchBody, {
        uris,
        ...(batchOptions.checkedWithin === undefined ? {} : { checked_within: batchOptions.checkedWithin }),
        ...(batchOptions.priority === undefined ? {} : { priority: batchOptions.priority }),
        ...(batchOptions.webhookUri === undefined ? {} : { webhook_uri: batchOptions.webhookUri }),
        ...(batchOptions.webhookSecretToken === undefined ? {} : { webhook_secret_token: batchOptions.webhookSecretToken }),
        ...(batchOptions.checkFragments === undefined ? {} : { check_fragments: batchOptions.checkFragments })
      }).pipe(
        Effect.flatMap((payload) => refineFailures(api.linkcheck.createBatch({ payload }))),
        Effect.map(({ outcome, ...report }) => ({ ...report, completedAtOnce: outcome === "completed" }))
      )

    const getBatch: LinkcheckClientService["getBatch"] = (id) =>
      refineFailures(api.linkcheck.getBatch({ path: { id: String(id) } })).pipe(
        // The contract has no 400 for this endpoint: a service that answers one is not speaking it.
        Effect.catchTag("InvalidRequest", (error) =>
          Effect.fail(
            new LinkcheckClientError({
              reason: "UnexpectedResponse",
              message: `The link checking service refused to read batch ${id}: ${error.error}`,
              status: 400,
              cause: error
            })
          ))
      )

    const waitForBatch: LinkcheckClientService["waitForBatch"] = (id, waitOptions = {}) => {
      const pollInterval = waitOptions.pollInterval ?? DEFAULT_POLL_INTERVAL
      const untilCompleted = Schedule.recurWhile((report: BatchReport) => report.status === "in_progress").pipe(
        Schedule.addDelay(() => pollInterval)
      )
      const waiting = Effect.repeat(getBatch(id), untilCompleted)
      const timeout = waitOptions.timeout
      return timeout === undefined
        ? waiting
        : Effect.timeoutFail(waiting, {
          duration: timeout,
          onTimeout: () => new WaitTimeout({ batchId: id, timeout: Duration.decode(timeout) })
        })
    }

    return { check, createBatch, getBatch, waitForBatch }
  })

/** The link checking API as an Effect service. */
export class LinkcheckClient extends ClientTag<LinkcheckClient, LinkcheckClientService>()(
  "@civicstack/sdk-linkcheck/LinkcheckClient",
  makeLinkcheckClient
) {}
