/**
 * How many autocannon connections each route family gets: ~26 in all, a sustained mix on a 2-CPU machine rather than
 * the most the server can take. Notifications and batches are also held to a rate (see settings), since each of
 * them queues work for the workers (emails, checks, a webhook).
 */
export const connections = {
  userJson: 6,
  refresh: 4,
  lists: 4,
  subscriptions: 4,
  notifications: 2,
  checks: 4,
  batches: 2
} as const

/** Refresh token chains per refresh connection: spares for chains that break. */
export const REFRESH_CHAINS_PER_CONNECTION = 3

/** Fleet links that the checks and batches go to. */
export const FLEET_LINKS = 500
