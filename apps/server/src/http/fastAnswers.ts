import { eventCounter } from "@civicstack/kit"
import { Context, Effect, Layer, Ref } from "effect"
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

/** A `POST` with a small form body, read in full, as a fast form answer sees it. */
export interface FastFormRequest {
  readonly contentType: string | undefined
  readonly body: string
  readonly authorization: string | undefined
  readonly forwardedFor: string | undefined
  readonly remoteAddress: string | undefined
}

/**
 * Answers `POST` to one of `paths` before the HTTP stack, sharing the code of the route it stands for, so that the
 * answer is the stack's. It is chosen from the request line and headers alone (see `formAnswerFor`); once chosen it
 * answers whatever the body holds. A failure is answered as the stack answers unexpected failures (503 or 500).
 */
export interface FastFormAnswer {
  readonly paths: ReadonlyArray<string>
  readonly answer: (request: FastFormRequest) => Effect.Effect<FastResponse, unknown>
}

/** Requests answered outside the HTTP stack. */
export const fastAnswersServed = eventCounter(
  "civicstack_http_fast_answers",
  "Requests answered from memory before the HTTP stack"
)

/** Where slots register their fast answers; the host asks each before handing a request to the HTTP stack. */
export class FastAnswers extends Context.Tag("@civicstack/server/FastAnswers")<FastAnswers, {
  readonly add: (answer: FastAnswer) => Effect.Effect<void>
  readonly all: Effect.Effect<ReadonlyArray<FastAnswer>>
  readonly addForm: (answer: FastFormAnswer) => Effect.Effect<void>
  readonly forms: Effect.Effect<ReadonlyArray<FastFormAnswer>>
}>() {
  static readonly layer = Layer.effect(
    FastAnswers,
    Effect.gen(function*() {
      const answers = yield* Ref.make<ReadonlyArray<FastAnswer>>([])
      const forms = yield* Ref.make<ReadonlyArray<FastFormAnswer>>([])
      return {
        add: (answer) => Ref.update(answers, (all) => [...all, answer]),
        all: Ref.get(answers),
        addForm: (answer) => Ref.update(forms, (all) => [...all, answer]),
        forms: Ref.get(forms)
      }
    })
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
      writeAnswer(response, answered)
      return answered
    }
  }
  return undefined
}

/** The largest form body answered before the HTTP stack: a token request is a few hundred bytes. */
export const FAST_FORM_MAX_BYTES = 8 * 1024

const FORM_TYPE = "application/x-www-form-urlencoded"

/**
 * The form answer that takes `request`, if any: a `POST` to one of its paths exactly (no query), with a form body of a
 * declared length up to `FAST_FORM_MAX_BYTES`, neither chunked nor awaiting `100-continue`. Anything else is left to
 * the HTTP stack, whose body limit and envelope then apply.
 */
export const formAnswerFor = (
  forms: ReadonlyMap<string, FastFormAnswer>,
  request: Http.IncomingMessage
): FastFormAnswer | undefined => {
  if (request.method !== "POST") return undefined
  const form = forms.get(request.url ?? "")
  if (form === undefined) return undefined
  const { headers } = request
  if (headers["transfer-encoding"] !== undefined || headers.expect !== undefined) return undefined
  const length = headers["content-length"]
  if (length === undefined || !/^\d{1,5}$/.test(length) || Number(length) > FAST_FORM_MAX_BYTES) return undefined
  return (headers["content-type"] ?? "").toLowerCase().startsWith(FORM_TYPE) ? form : undefined
}

/** Reads the body of `request` in full, then calls `then` with it; nothing is called if the client goes away first. */
export const readBody = (request: Http.IncomingMessage, then: (body: string) => void) => {
  const chunks: Array<Buffer> = []
  request.on("data", (chunk: Buffer) => chunks.push(chunk))
  request.on("end", () => then(Buffer.concat(chunks).toString("utf8")))
  // an aborted request ends with "close", not "end"; its error needs a listener so that it is not thrown
  request.on("error", () => {})
}

const headerText = (value: string | ReadonlyArray<string> | undefined) =>
  value === undefined || typeof value === "string" ? value : value.join(", ")

/** What a fast form answer is given of `request` and its `body`. */
export const fastFormRequest = (request: Http.IncomingMessage, body: string): FastFormRequest => ({
  contentType: request.headers["content-type"],
  body,
  authorization: request.headers.authorization,
  // Node joins repeated headers other than set-cookie: a string, as the HTTP stack sees it
  forwardedFor: headerText(request.headers["x-forwarded-for"]),
  remoteAddress: request.socket.remoteAddress
})

export const writeAnswer = (response: Http.ServerResponse, answered: FastResponse) => {
  response.writeHead(answered.status, { ...answered.headers, "content-length": Buffer.byteLength(answered.body) })
  response.end(answered.body)
}
