import type { SqlClient } from "@effect/sql/SqlClient"
import { Layer } from "effect"
import type { AlertsStore } from "./AlertsStore"
import type { EmailStore } from "./EmailStore"
import { emailsSql } from "./sql/emails"
import { subscriptionsSql } from "./sql/subscriptions"
import type { SqlStoreOptions } from "./sql/subscriptions"

export type { SqlStoreOptions }

/** Both stores over the host's `SqlClient` (PostgreSQL, or PGlite embedded); run `migrate` first. */
export const layerSql = (options: SqlStoreOptions = {}): Layer.Layer<AlertsStore | EmailStore, never, SqlClient> =>
  Layer.merge(subscriptionsSql(options), emailsSql)
