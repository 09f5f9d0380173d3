import { statements } from "./statements"

/**
 * Uses of an allowance within its current window, one row per key (`auth-token:<caller>`): how many auth-token
 * emails a caller may still ask for this hour, counted the same by every copy of the service.
 */
export const countAllowances = statements(
  `CREATE TABLE alerts.allowances (
    key text PRIMARY KEY,
    window_start timestamptz NOT NULL,
    used integer NOT NULL
  )`
)
