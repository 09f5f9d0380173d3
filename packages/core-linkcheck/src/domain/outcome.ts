import type { CheckResult } from "./check"
import { byImportance, describeProblem, Problem } from "./problems"
import type { ProblemDescription, Severity } from "./problems"

/** A problem met along a redirect chain; `redirectTarget` is set when it was met on a redirect target. */
export interface Finding {
  readonly problem: Problem
  readonly redirectTarget: string | null
}

export const finding = (problem: Problem, redirectTarget: string | null = null): Finding => ({ problem, redirectTarget })

const uniqueMessages = (described: ReadonlyArray<ProblemDescription>, severity: Severity): ReadonlyArray<string> => [
  ...new Set(described.filter((problem) => problem.severity === severity).map((problem) => problem.message))
]

/** Most links: nothing found. */
const okOutcome: CheckResult = {
  status: "ok",
  errors: [],
  warnings: [],
  danger: [],
  problemSummary: null,
  suggestedFix: null
}

/**
 * The outcome of a check from everything found along its chain. A link with danger is broken: it goes
 * somewhere nobody should be sent.
 */
export const assembleOutcome = (findings: ReadonlyArray<Finding>): CheckResult => {
  if (findings.length === 0) return okOutcome
  const described = findings.map(({ problem, redirectTarget }) => describeProblem(problem, redirectTarget))
  const errors = uniqueMessages(described, "error")
  const warnings = uniqueMessages(described, "warning")
  const danger = uniqueMessages(described, "danger")
  const mostImportant = [...described].sort(byImportance)[0]
  const onlyProblem = errors.length + warnings.length + danger.length === 1 ? mostImportant : undefined
  return {
    status: errors.length > 0 || danger.length > 0 ? "broken" : warnings.length > 0 ? "caution" : "ok",
    errors,
    warnings,
    danger,
    problemSummary: mostImportant?.summary ?? null,
    suggestedFix: onlyProblem?.suggestedFix ?? null
  }
}

/** The outcome of a check that could not be completed for internal reasons. */
export const checkFailedOutcome: CheckResult = assembleOutcome([finding(Problem.CheckFailed())])
