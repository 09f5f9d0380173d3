import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect, Layer } from "effect"
import { SsoStore } from "./SsoStore"
import { applicationMethods } from "./sql/applications"
import { emailLinkMethods } from "./sql/emailLinks"
import { eventMethods } from "./sql/events"
import { listenForChanges } from "./sql/holders"
import type { Listen } from "./sql/holders"
import { keyMethods } from "./sql/keys"
import { sessionMethods } from "./sql/sessions"
import { tokenMethods } from "./sql/tokens"
import { twoStepMethods } from "./sql/twoStep"
import { makeSsoSqlTools } from "./sql/tools"
import { userMethods } from "./sql/users"

/** An advisory lock of the sso schema's own: held while first-start setup or a bootstrap file is applied. */
const SETUP_LOCK_KEY = 5_463_118_922

export interface SqlStoreOptions {
  /**
   * LISTEN on the store's database (e.g. `PgClient.listen`). With it the store keeps token holders and applications in
   * memory, and every copy forgets them as soon as any copy commits a change to them; without it each lookup reads the database.
   */
  readonly listen?: Listen | undefined
}

const makeSqlStore = (options: SqlStoreOptions) => Effect.gen(function*() {
  const tools = yield* makeSsoSqlTools
  const { changingHolders, sql, storeError, transaction } = tools
  const store: SsoStore["Type"] = {
    exclusively: (effect) =>
      transaction(Effect.zipRight(
        Effect.mapError(sql`SELECT pg_advisory_xact_lock(${SETUP_LOCK_KEY})`, storeError("exclusively")),
        effect
      )),
    atomically: tools.atomically,
    ...applicationMethods(tools),
    ...userMethods(tools),
    ...(yield* tokenMethods(tools)),
    ...sessionMethods(tools),
    ...twoStepMethods(tools),
    ...emailLinkMethods(tools),
    ...keyMethods(tools),
    ...eventMethods(tools)
  }
  yield* listenForChanges(options.listen, tools.memory, sql)
  return {
    ...store,
    updateApplication: changingHolders(store.updateApplication),
    updateUser: changingHolders(store.updateUser),
    setSuspension: changingHolders(store.setSuspension),
    setPermissions: changingHolders(store.setPermissions),
    revokeTokens: changingHolders(store.revokeTokens)
  } satisfies SsoStore["Type"]
})

/** The store over the host's `SqlClient` (PostgreSQL, or PGlite embedded); run `migrate` first. */
export const layerSql = (options: SqlStoreOptions = {}): Layer.Layer<SsoStore, never, SqlClient> =>
  Layer.scoped(SsoStore, makeSqlStore(options))
