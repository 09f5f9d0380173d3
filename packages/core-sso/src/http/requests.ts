import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Effect, Either, Option } from "effect"

/** The address failures are counted under: the proxy's `X-Forwarded-For` client when trusted, else the peer. */
export const clientAddress = (request: HttpServerRequest.HttpServerRequest, trustProxy: boolean): string => {
  const forwarded = request.headers["x-forwarded-for"]
  if (trustProxy && forwarded !== undefined) {
    const first = forwarded.split(",")[0]?.trim()
    if (first !== undefined && first !== "") return first
  }
  return Option.getOrElse(request.remoteAddress, () => "unknown")
}

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

/** An `application/x-www-form-urlencoded` body, each parameter once. */
export const readForm = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function*() {
    const contentType = (request.headers["content-type"] ?? "").toLowerCase()
    if (!contentType.startsWith("application/x-www-form-urlencoded")) {
      return Either.left<FormProblem>({ description: "The body must be application/x-www-form-urlencoded" })
    }
    const body = yield* Effect.either(request.urlParamsBody)
    if (Either.isLeft(body)) return Either.left<FormProblem>({ description: "The body could not be read" })
    return singleValues(body.right)
  })

/** The query of a request URL, each parameter as sent (repeated ones as arrays). */
export const queryOf = (url: string) => {
  const query: Record<string, string | Array<string>> = Object.create(null)
  for (const [name, value] of new URL(url, "http://host").searchParams) {
    const seen = query[name]
    query[name] = seen === undefined ? value : [...(typeof seen === "string" ? [seen] : seen), value]
  }
  return query
}
