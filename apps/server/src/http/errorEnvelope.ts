import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import { Cause, Effect, Predicate } from "effect"

/** The largest request body accepted: a batch of 5000 long uris fits with room to spare. */
export const MAX_BODY_BYTES = 5 * 1024 * 1024

const envelope = (status: number, error: string, details?: Record<string, unknown>) =>
  HttpServerResponse.unsafeJson(details === undefined ? { error } : { error, details }, { status })

const describeIssues = (error: HttpApiDecodeError) => {
  const details: Record<string, string> = {}
  for (const issue of error.issues) {
    const field = issue.path.length === 0 ? "body" : issue.path.map(String).join(".")
    details[field] ??= issue.message
  }
  const summary = Object.entries(details).map(([field, message]) => `${field}: ${message}`).join("; ")
  return { summary, details }
}

/**
 * Every bad request answers the JSON envelope `{"error", "details"}` instead of the library's own body or an empty
 * one: schema failures and unreadable bodies with 400, oversized bodies with 413, unknown paths with 404.
 */
export const ErrorEnvelope = HttpApiBuilder.middleware((app) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const length = Number(request.headers["content-length"] ?? "0")
    if (length > MAX_BODY_BYTES) {
      return HttpServerResponse.setHeader(
        envelope(413, `The request body is larger than ${MAX_BODY_BYTES} bytes`),
        "connection",
        "close"
      )
    }
    return yield* app
  }).pipe(
    // The app's error channel is typed `never`, yet the router and the decoders fail through it, and an unreadable
    // body arrives as a defect.
    Effect.catchAllCause((cause) => {
      if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
      const error: unknown = Cause.squash(cause)
      if (error instanceof HttpApiDecodeError) {
        const { details, summary } = describeIssues(error)
        return Effect.succeed(envelope(400, `Invalid request: ${summary}`, details))
      }
      if (Predicate.isTagged(error, "RequestError")) {
        return Effect.succeed(envelope(400, "The request body is not valid JSON"))
      }
      if (Predicate.isTagged(error, "RouteNotFound")) return Effect.succeed(envelope(404, "Not Found"))
      return Effect.failCause(cause)
    })
  )
)
