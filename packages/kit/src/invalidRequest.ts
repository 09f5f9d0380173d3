import type { HttpApiDecodeError } from "@effect/platform/HttpApiError"

/**
 * The body of the 400 a host answers when the contract's schemas refuse a request before any handler runs: a summary,
 * and the first problem of each field by its path (`body` for the whole body).
 */
export const invalidRequestBody = (error: HttpApiDecodeError) => {
  const details: Record<string, string> = {}
  for (const issue of error.issues) {
    const field = issue.path.length === 0 ? "body" : issue.path.map(String).join(".")
    details[field] ??= issue.message
  }
  const summary = Object.entries(details).map(([field, message]) => `${field}: ${message}`).join("; ")
  return { error: `Invalid request: ${summary}`, details }
}
