import { randomUUID } from "node:crypto"
import type * as Http from "node:http"

/** What an id given by the client (a proxy's, a tracing header's) may look like: nothing a log line could misread. */
const WELL_FORMED = /^[A-Za-z0-9._:-]{1,128}$/

const ids = new WeakMap<Http.IncomingMessage, string>()

/**
 * The request's id: the one its `x-request-id` header gives when it is well-formed, otherwise a new UUID; the same
 * each time it is asked for. Every answer carries it, and every log line written while serving the request names it.
 */
export const requestIdOf = (request: Http.IncomingMessage): string => {
  const known = ids.get(request)
  if (known !== undefined) return known
  const given = request.headers["x-request-id"]
  const id = typeof given === "string" && WELL_FORMED.test(given) ? given : randomUUID()
  ids.set(request, id)
  return id
}
