import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpApi from "@effect/platform/HttpApi"
import { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as SqlClient from "@effect/sql/SqlClient"
import { invalidRequestBody } from "@civicstack/kit"
import { Cause, Duration, Effect, Option, Predicate } from "effect"
import { isBodyTooLarge, MAX_BODY_BYTES } from "./bodyLimit"
import { MAX_JSON_DEPTH, nestsDeeperThan } from "./jsonDepth"
import { routeTable } from "./methods"
import { requestIdOf } from "./requestId"

/** How long an unreachable database is expected to take to come back, as told to clients. */
const RETRY_AFTER_SECONDS = 5

const DATABASE_PROBE_TIMEOUT = Duration.seconds(2)

const envelope = (status: number, error: string, details?: Record<string, unknown>) =>
  HttpServerResponse.unsafeJson(details === undefined ? { error } : { error, details }, { status })

const tooLarge = () => envelope(413, `The request body is larger than ${MAX_BODY_BYTES} bytes`)

/**
 * The bodies the services' endpoints take: JSON, and forms (the sign-on's). Any other declared type is refused before
 * the body is read; a multipart body in particular would wait for a stream this guard has already read.
 */
const acceptedBodyType = (contentType: string) =>
  contentType === "" || /^application\/([\w.-]+\+)?json\b/.test(contentType) ||
  contentType.startsWith("application/x-www-form-urlencoded")

const unsupportedType = (contentType: string) =>
  envelope(415, `The request body must be JSON (application/json), not ${contentType.split(";")[0]}`)

const hasBody = (request: HttpServerRequest.HttpServerRequest) =>
  request.headers["transfer-encoding"] !== undefined || Number(request.headers["content-length"] ?? "0") > 0

/** A failure that comes from storage: the database may be unreachable. */
const isStorageFailure = (cause: Cause.Cause<unknown>) =>
  [...Cause.failures(cause), ...Cause.defects(cause)].some((error) =>
    Predicate.isTagged(error, "SqlError") || Predicate.isTagged(error, "StoreError") ||
    Predicate.isTagged(error, "JobQueueError")
  )

/** An answer of the host's own, before it is a response: its JSON body, status and headers. */
export interface EnvelopeAnswer {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: { readonly error: string; readonly details?: Record<string, unknown> }
}

/**
 * The answer to a request that failed unexpectedly: 503 with `Retry-After` when it failed on storage and the database
 * cannot be reached, else 500 with a request id, logged with its cause. For the HTTP stack and for the answers given
 * before it.
 */
export const makeUnexpectedAnswer = Effect.map(SqlClient.SqlClient, (sql) => {
  const databaseAnswers = sql`SELECT 1`.pipe(
    Effect.timeout(DATABASE_PROBE_TIMEOUT),
    Effect.as(true),
    Effect.orElseSucceed(() => false)
  )
  return (
    request: { readonly method: string; readonly url: string; readonly requestId: string },
    cause: Cause.Cause<unknown>
  ) =>
    Effect.gen(function*() {
      if (isStorageFailure(cause) && !(yield* databaseAnswers)) {
        yield* Effect.logWarning("Request refused: the database cannot be reached").pipe(
          Effect.annotateLogs({ method: request.method, url: request.url })
        )
        return {
          status: 503,
          headers: { "retry-after": String(RETRY_AFTER_SECONDS) },
          body: { error: "The service cannot reach its database; try again shortly" }
        } satisfies EnvelopeAnswer
      }
      const { requestId } = request
      yield* Effect.logError("Request failed unexpectedly", cause).pipe(
        Effect.annotateLogs({ request_id: requestId, method: request.method, url: request.url })
      )
      return {
        status: 500,
        headers: { "x-request-id": requestId },
        body: { error: "Something went wrong on our side; it has been logged", details: { request_id: requestId } }
      } satisfies EnvelopeAnswer
    })
})

/**
 * The host's answers for every request the API's own handlers do not answer: the body limit (on the bytes read,
 * chunked or not), 400 for bad input, 404 and 405 with `Allow`, 503 with `Retry-After` while the database cannot be
 * reached, and 500 with a request id for any other failure, which is logged with its cause. Every one is the JSON
 * envelope `{"error", "details"}`.
 */
export const requestGuard = (api: HttpApi.HttpApi<string, HttpApiGroup.HttpApiGroup.Any, any, any>) =>
  HttpApiBuilder.middleware(Effect.gen(function*() {
    const unexpectedAnswer = yield* makeUnexpectedAnswer
    const { methodsOf } = routeTable(api)

    /**
     * Reads the body once, before any handler: the library keeps the text for the payload decoders, and a body over
     * the limit ends early (see `LimitedIncomingMessage`) and is refused whole. A refused body, or one of a type no
     * endpoint takes, is not read at all; Node discards it as it arrives.
     */
    const refuseBody = (request: HttpServerRequest.HttpServerRequest) =>
      Effect.gen(function*() {
        const contentType = (request.headers["content-type"] ?? "").trim().toLowerCase()
        if (!acceptedBodyType(contentType)) return Option.some(unsupportedType(contentType))
        if (Number(request.headers["content-length"] ?? "0") > MAX_BODY_BYTES) return Option.some(tooLarge())
        const read = yield* Effect.either(request.text)
        if (isBodyTooLarge(NodeHttpServerRequest.toIncomingMessage(request))) return Option.some(tooLarge())
        if (read._tag === "Left") return Option.some(envelope(400, "The request body could not be read"))
        const json = contentType.includes("json")
        return json && nestsDeeperThan(read.right, MAX_JSON_DEPTH)
          ? Option.some(envelope(400, `The request body nests arrays and objects more than ${MAX_JSON_DEPTH} deep`))
          : Option.none()
      })

    const unexpected = (request: HttpServerRequest.HttpServerRequest, cause: Cause.Cause<unknown>) =>
      Effect.map(unexpectedAnswer({
        method: request.method,
        url: request.url,
        requestId: requestIdOf(NodeHttpServerRequest.toIncomingMessage(request))
      }, cause), ({ body, headers, status }) =>
        HttpServerResponse.unsafeJson(body, { status, headers }))

    return (app) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        if (hasBody(request)) {
          const refused = yield* refuseBody(request)
          if (Option.isSome(refused)) return refused.value
        }
        return yield* app.pipe(
          // The app's error channel is typed `never`, yet the router and the decoders fail through it, and an
          // unreadable body arrives as a defect.
          Effect.catchAllCause((cause) => {
            if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
            const error: unknown = Cause.squash(cause)
            if (error instanceof HttpApiDecodeError) {
              const { details, error: message } = invalidRequestBody(error)
              return Effect.succeed(envelope(400, message, details))
            }
            if (Predicate.isTagged(error, "RequestError")) {
              return Effect.succeed(envelope(400, "The request body is not valid JSON"))
            }
            if (Predicate.isTagged(error, "RouteNotFound")) {
              const allowed = methodsOf(new URL(request.url, "http://host").pathname)
              if (allowed.length === 0) return Effect.succeed(envelope(404, "Not Found"))
              return Effect.succeed(HttpServerResponse.setHeader(
                envelope(405, `${request.method} is not allowed here; use ${allowed.join(" or ")}`),
                "allow",
                allowed.join(", ")
              ))
            }
            // a failure the endpoint declares is encoded by the library with its own status
            if (Option.isSome(Cause.failureOption(cause)) && !isStorageFailure(cause)) return Effect.failCause(cause)
            return unexpected(request, cause)
          })
        )
      })
  }))
