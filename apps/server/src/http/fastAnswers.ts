import { Context, Effect, Layer, Metric, Ref } from "effect"
import type * as Http from "node:http"

/** A request as a fast answer sees it: no body is read. */
export interface FastRequest {
  readonly method: string
  readonly pathname: string
  readonly query: URLSearchParams
  readonly authorization: string | undefined
}

export interface FastResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/**
 * Answers a request from memory, at once, or leaves it (`undefined`) to the HTTP stack. Only for hot reads whose
 * answer the stack would give byte for byte; anything unusual is left to the stack.
 */
export type FastAnswer = (request: FastRequest) => FastResponse | undefined

/** Requests answered outside the HTTP stack. */
export const fastAnswersServed = Metric.counter("civicstack_http_fast_answers", {
  description: "Requests answered from memory before the HTTP stack",
  incremental: true
})

/** Where slots register their fast answers; the host asks each before handing a request to the HTTP stack. */
export class FastAnswers extends Context.Tag("@civicstack/server/FastAnswers")<FastAnswers, {
  readonly add: (answer: FastAnswer) => Effect.Effect<void>
  readonly all: Effect.Effect<ReadonlyArray<FastAnswer>>
}>() {
  static readonly layer = Layer.effect(
    FastAnswers,
    Effect.map(Ref.make<ReadonlyArray<FastAnswer>>([]), (answers) => ({
      add: (answer) => Ref.update(answers, (all) => [...all, answer]),
      all: Ref.get(answers)
    }))
  )
}

const requestOf = (request: Http.IncomingMessage): FastRequest | undefined => {
  const url = request.url ?? "/"
  if (!url.startsWith("/") || url.startsWith("//")) return undefined
  const queryStart = url.indexOf("?")
  const authorization = request.headers.authorization
  return {
    method: request.method ?? "GET",
    pathname: queryStart === -1 ? url : url.slice(0, queryStart),
    query: new URLSearchParams(queryStart === -1 ? "" : url.slice(queryStart + 1)),
    authorization
  }
}

/** Writes the first fast answer to `request`, if any; false leaves the request to the HTTP stack. */
export const answerFast = (
  answers: ReadonlyArray<FastAnswer>,
  request: Http.IncomingMessage,
  response: Http.ServerResponse
): FastResponse | undefined => {
  if (answers.length === 0) return undefined
  const fastRequest = requestOf(request)
  if (fastRequest === undefined) return undefined
  for (const answer of answers) {
    const answered = answer(fastRequest)
    if (answered !== undefined) {
      response.writeHead(answered.status, { ...answered.headers, "content-length": Buffer.byteLength(answered.body) })
      response.end(answered.body)
      return answered
    }
  }
  return undefined
}
