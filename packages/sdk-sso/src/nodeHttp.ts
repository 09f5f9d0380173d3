import type { TokenRefused } from "./errors"

/** The parts of a Node (or Express) request the handlers read. */
export interface NodeRequestLike {
  readonly method?: string | undefined
  readonly url?: string | undefined
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
}

/** The parts of a Node `ServerResponse` (which an Express response is) the handlers write. */
export interface NodeResponseLike {
  statusCode: number
  readonly headersSent: boolean
  setHeader(name: string, value: string | number | ReadonlyArray<string>): unknown
  end(body?: string): unknown
}

/** The `next` of Express-style middleware. */
export type NextFunction = (error?: unknown) => void

/** The `Authorization` header, when it was sent once. */
export const authorizationOf = (request: NodeRequestLike): string | undefined => {
  const header = request.headers["authorization"]
  return typeof header === "string" ? header : undefined
}

export const sendJson = (
  response: NodeResponseLike,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {}
): void => {
  response.statusCode = status
  response.setHeader("content-type", "application/json; charset=utf-8")
  response.setHeader("cache-control", "no-store")
  for (const [name, value] of Object.entries(headers)) response.setHeader(name, value)
  response.end(JSON.stringify(body))
}

/** RFC 6750 section 3: no error code when no token was sent, `invalid_token` or `insufficient_scope` otherwise. */
export const challengeOf = (refusal: TokenRefused): Record<string, string> => {
  switch (refusal.reason) {
    case "MissingToken":
      return { "www-authenticate": "Bearer" }
    case "InvalidToken":
      return { "www-authenticate": `Bearer error="invalid_token"` }
    case "MissingPermission":
      return { "www-authenticate": `Bearer error="insufficient_scope"` }
    case "SsoUnavailable":
      return { "retry-after": "5" }
  }
}

export const sendRefusal = (response: NodeResponseLike, refusal: TokenRefused): void =>
  sendJson(response, refusal.status, { error: refusal.message }, challengeOf(refusal))
