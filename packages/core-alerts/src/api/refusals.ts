import { ParseResult } from "effect"
import { InvalidRequest, UnprocessableEntity } from "./errors"

/**
 * The refusal of a request whose parameters or body did not decode: 400 (`InvalidRequest`) when a required field is
 * missing, 422 (`UnprocessableEntity`) when a value is refused. `details` names each field (a dotted path, such as
 * `tags.format`; `body` for the whole) with what is wrong with it, and `error` says the same in one line.
 */
export const refusalOf = (error: ParseResult.ParseError): InvalidRequest | UnprocessableEntity => {
  const issues = ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => ({
    tag: issue._tag,
    field: issue.path.length === 0 ? "body" : issue.path.map(String).join("."),
    message: issue.message
  }))
  // a field that may be null also fails as "not null" beside its real problem inside it: keep the innermost
  const innermost = issues.filter(({ field }) => !issues.some((other) => other.field.startsWith(`${field}.`)))
  const byField = new Map<string, Array<string>>()
  for (const { field, message } of innermost) {
    const messages = byField.get(field) ?? []
    if (!messages.includes(message)) messages.push(message)
    byField.set(field, messages)
  }
  const details = Object.fromEntries(byField)
  const summary = [...byField].map(([field, messages]) => `${field}: ${messages.join("; ")}`).join(", ")
  return innermost.some(({ tag }) => tag === "Missing")
    ? new InvalidRequest({ error: summary, details })
    : new UnprocessableEntity({ error: summary, details })
}
