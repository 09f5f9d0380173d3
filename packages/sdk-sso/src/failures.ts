import * as HttpApiError from "@effect/platform/HttpApiError"
import * as HttpClientError from "@effect/platform/HttpClientError"
import { Effect, ParseResult } from "effect"
import { SsoClientError } from "./errors"

type TransportOrContractFailure =
  | HttpApiError.HttpApiDecodeError
  | HttpClientError.HttpClientError
  | ParseResult.ParseError

const isTransportOrContractFailure = (error: unknown): error is TransportOrContractFailure =>
  error instanceof HttpApiError.HttpApiDecodeError ||
  HttpClientError.isHttpClientError(error) ||
  ParseResult.isParseError(error)

const describe = (error: TransportOrContractFailure): SsoClientError => {
  if (error instanceof HttpApiError.HttpApiDecodeError || ParseResult.isParseError(error)) {
    return new SsoClientError({
      reason: "UnexpectedResponse",
      message: `The SSO answered with a body that does not match its contract: ${error.message}`,
      cause: error
    })
  }
  if (error._tag === "RequestError") {
    return new SsoClientError({ reason: "Transport", message: `Could not reach the SSO: ${error.message}`, cause: error })
  }
  return new SsoClientError({
    reason: "UnexpectedResponse",
    message: `The SSO answered ${error.methodAndUrl} with an unexpected status ${error.response.status}`,
    status: error.response.status,
    cause: error
  })
}

/** Leaves the contract's own errors as they are and turns transport and decoding failures into `SsoClientError`. */
export const refineFailures = <A, E, R>(
  effect: Effect.Effect<A, E | TransportOrContractFailure, R>
): Effect.Effect<A, Exclude<E, TransportOrContractFailure> | SsoClientError, R> =>
  Effect.catchIf(effect, isTransportOrContractFailure, (error) => Effect.fail(describe(error)))
