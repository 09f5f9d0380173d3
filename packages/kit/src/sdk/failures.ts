import * as HttpApiError from "@effect/platform/HttpApiError"
import * as HttpClientError from "@effect/platform/HttpClientError"
import { Effect, ParseResult } from "effect"

/** What a client call fails with besides the contract's own errors: the service could not be reached, or answered outside its contract. */
export type TransportOrContractFailure =
  | HttpApiError.HttpApiDecodeError
  | HttpClientError.HttpClientError
  | ParseResult.ParseError

const isTransportOrContractFailure = (error: unknown): error is TransportOrContractFailure =>
  error instanceof HttpApiError.HttpApiDecodeError ||
  HttpClientError.isHttpClientError(error) ||
  ParseResult.isParseError(error)

/** The fields of an SDK's client error (`SsoClientError`, `AlertsClientError`, `LinkcheckClientError`). */
export interface ClientErrorFields {
  readonly reason: "Transport" | "UnexpectedResponse"
  readonly message: string
  readonly status?: number
  readonly cause: unknown
}

export interface FailureMapping<ClientError, Refusal> {
  /** How the service is named in messages, e.g. "the email alert service". */
  readonly service: string
  readonly clientError: (fields: ClientErrorFields) => ClientError
  /**
   * A refusal in the platform's own 400 body (a service that does not render its refusals in the envelope); left
   * out, it is an unexpected response.
   */
  readonly platformRefusal?: (error: HttpApiError.HttpApiDecodeError) => Refusal
}

const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1)

/**
 * Leaves the contract's own errors of a call as they are and turns transport and decoding failures into the SDK's
 * client error (or, with `platformRefusal`, the platform's 400 into the SDK's refusal).
 */
export const failureMapping = <ClientError, Refusal = never>(mapping: FailureMapping<ClientError, Refusal>) => {
  const describe = (error: TransportOrContractFailure): ClientError | Refusal => {
    if (error instanceof HttpApiError.HttpApiDecodeError && mapping.platformRefusal !== undefined) {
      return mapping.platformRefusal(error)
    }
    if (error instanceof HttpApiError.HttpApiDecodeError || ParseResult.isParseError(error)) {
      return mapping.clientError({
        reason: "UnexpectedResponse",
        message: `${capitalised(mapping.service)} answered with a body that does not match its contract: ${error.message}`,
        cause: error
      })
    }
    if (error._tag === "RequestError") {
      return mapping.clientError({ reason: "Transport", message: `Could not reach ${mapping.service}: ${error.message}`, cause: error })
    }
    return mapping.clientError({
      reason: "UnexpectedResponse",
      message: `${capitalised(mapping.service)} answered ${error.methodAndUrl} with an unexpected status ${error.response.status}`,
      status: error.response.status,
      cause: error
    })
  }
  return <A, E, R>(
    effect: Effect.Effect<A, E | TransportOrContractFailure, R>
  ): Effect.Effect<A, Exclude<E, TransportOrContractFailure> | ClientError | Refusal, R> =>
    Effect.catchIf(effect, isTransportOrContractFailure, (error) => Effect.fail(describe(error)))
}
