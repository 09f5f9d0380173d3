import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { LinkInspector } from "../../../src/services/LinkInspector"
import type { CheckResult as CheckOutcome } from "../../../src/domain/check"
import type { InspectorConfig } from "../../../src/services/LinkInspector"
import type { FixtureFleet } from "../../fixtures/fleet"

/**
 * Short timeouts and thresholds so the suite stays fast; private addresses allowed since the fleet is on 127.0.0.1.
 * Names resolve with the fleet's lookup unless `systemResolver` is set.
 */
export const testConfig = (
  fleet: FixtureFleet,
  overrides: Partial<InspectorConfig> = {},
  systemResolver = false
): Partial<InspectorConfig> => ({
  allowPrivateAddresses: true,
  ...(systemResolver ? {} : { lookup: fleet.lookup }),
  connectTimeout: "500 millis",
  responseTimeout: "1 second",
  slowThreshold: "300 millis",
  retries: { attempts: 3, maxRetryAfter: "50 millis", baseDelay: "10 millis" },
  ...overrides
})

/** One check with a LinkInspector of its own. */
export const checkLink = (
  fleet: FixtureFleet,
  uri: string,
  options: {
    readonly background?: boolean
    readonly config?: Partial<InspectorConfig>
    readonly systemResolver?: boolean
  } = {}
): Effect.Effect<CheckOutcome> =>
  Effect.flatMap(LinkInspector, (inspector) => inspector.inspect(uri, { background: options.background ?? false })).pipe(
    Effect.map(({ result }) => result),
    Effect.provide(LinkInspector.layer(testConfig(fleet, options.config, options.systemResolver)))
  )

/** Every message is a whole sentence meant for people, not an error dump. */
export const expectEndUserSentences = (outcome: CheckOutcome): void => {
  for (const message of [...outcome.errors, ...outcome.warnings, ...outcome.danger]) {
    expect(message).toMatch(/^[A-Z].{10,}[.)]$/)
    expect(message).not.toMatch(/Error:|undefined|null|\[object/)
  }
  if (outcome.suggestedFix !== null) expect(outcome.suggestedFix).toMatch(/^[A-Z].{5,}\.$/)
}

/** The outcome has exactly one problem, with this summary and severity; the suggested fix is then given. */
export const expectSingleProblem = (
  outcome: CheckOutcome,
  expected: { readonly status: CheckOutcome["status"]; readonly summary: string; readonly severity: "error" | "warning" | "danger" }
): string => {
  expect(outcome.status).toBe(expected.status)
  expect(outcome.problemSummary).toBe(expected.summary)
  expect({ errors: outcome.errors.length, warnings: outcome.warnings.length, danger: outcome.danger.length }).toEqual({
    errors: expected.severity === "error" ? 1 : 0,
    warnings: expected.severity === "warning" ? 1 : 0,
    danger: expected.severity === "danger" ? 1 : 0
  })
  expect(outcome.suggestedFix).not.toBeNull()
  expectEndUserSentences(outcome)
  const message = [...outcome.errors, ...outcome.warnings, ...outcome.danger][0]
  return message ?? ""
}

export const expectOk = (outcome: CheckOutcome): void =>
  expect(outcome).toEqual({
    status: "ok",
    errors: [],
    warnings: [],
    danger: [],
    problemSummary: null,
    suggestedFix: null
  })
