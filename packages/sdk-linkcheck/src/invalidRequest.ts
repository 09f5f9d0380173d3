import { InvalidRequest } from "@civicstack/core-linkcheck/api"
import { ParseResult } from "effect"

interface Issue {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

const fieldOf = (issue: Issue) => issue.path.map(String).join(".")

/**
 * One readable sentence for people, and one problem per field for programs. An optional field also fails its
 * `undefined` alternative ("Expected undefined, ..."), reported after the field's own rule: the first issue of a
 * field is the one worth showing.
 */
export const invalidRequestFromIssues = (issues: ReadonlyArray<Issue>): InvalidRequest => {
  const problemsByField = new Map<string, string>()
  for (const issue of issues) {
    const field = fieldOf(issue)
    if (!problemsByField.has(field)) problemsByField.set(field, issue.message)
  }
  const problems = [...problemsByField]
  return new InvalidRequest({
    error: problems.map(([field, message]) => (field === "" ? message : `${field}: ${message}`)).join("; "),
    details: Object.fromEntries(problems)
  })
}

export const invalidRequestFromParseError = (error: ParseResult.ParseError): InvalidRequest =>
  invalidRequestFromIssues(ParseResult.ArrayFormatter.formatErrorSync(error))
