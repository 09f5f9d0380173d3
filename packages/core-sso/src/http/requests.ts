import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Effect, Either, Option } from "effect"

/** Where a request comes from, by its `X-Forwarded-For` and its peer's address (kit's `clientAddressOf`). */
export type AddressOf = (forwardedFor: string | undefined, remoteAddress: string | undefined) => string

export const clientAddress = (request: HttpServerRequest.HttpServerRequest, addressOf: AddressOf): string =>
  addressOf(request.headers["x-forwarded-for"], Option.getOrUndefined(request.remoteAddress))

export const header = (request: HttpServerRequest.HttpServerRequest, name: string): string | undefined =>
  request.headers[name]

/** A parameter sent twice, or a body that is not a form. */
export interface FormProblem {
  readonly description: string
}

/** The parameters of a query or form, each at most once. */
export const singleValues = (
  entries: Iterable<readonly [string, string]>
): Either.Either<Record<string, string>, FormProblem> => {
  const values: Record<string, string> = Object.create(null)
  for (const [name, value] of entries) {
    if (name in values) return Either.left({ description: `The ${name} parameter is repeated` })
    values[name] = value
  }
  return Either.right(values)
}

const FORM_TYPE = "application/x-www-form-urlencoded"

/**
 * The parameters of an `application/x-www-form-urlencoded` body, each once; `body` is `undefined` when it could not be
 * read. The content type is checked first: a body of another type is not read.
 */
export const formOf = (
  contentType: string | undefined,
  body: string | undefined
): Either.Either<Record<string, string>, FormProblem> => {
  if (!(contentType ?? "").toLowerCase().startsWith(FORM_TYPE)) {
    return Either.left({ description: "The body must be application/x-www-form-urlencoded" })
  }
  if (body === undefined) return Either.left({ description: "The body could not be read" })
  return singleValues(new URLSearchParams(body))
}

const isForm = (request: HttpServerRequest.HttpServerRequest) =>
  (request.headers["content-type"] ?? "").toLowerCase().startsWith(FORM_TYPE)

/** The body of a form request (none read when it is not a form), `undefined` when it could not be read. */
const formBody = (request: HttpServerRequest.HttpServerRequest) =>
  isForm(request) ? Effect.map(Effect.option(request.text), Option.getOrUndefined) : Effect.succeed(undefined)

/** What the form endpoints read of a request, its body included. */
export const formRequestOf = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.map(formBody(request), (body) => ({
    body,
    contentType: request.headers["content-type"],
    authorization: request.headers.authorization,
    forwardedFor: request.headers["x-forwarded-for"],
    remoteAddress: Option.getOrUndefined(request.remoteAddress)
  }))

/** An `application/x-www-form-urlencoded` body, each parameter once. */
export const readForm = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.map(formBody(request), (body) => formOf(request.headers["content-type"], body))

/** The query of a request URL, each parameter as sent (repeated ones as arrays). */
export const queryOf = (url: string) => {
  const query: Record<string, string | Array<string>> = Object.create(null)
  for (const [name, value] of new URL(url, "http://host").searchParams) {
    const seen = query[name]
    query[name] = seen === undefined ? value : [...(typeof seen === "string" ? [seen] : seen), value]
  }
  return query
}
