import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema } from "effect"
import type { Application } from "../../domain/records"
import type { SsoStore } from "../SsoStore"
import { json, Names, storable, timestamp, Timestamp } from "./columns"
import type { SsoSqlTools } from "./tools"

export const ApplicationRow = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  description: Schema.String,
  home_uri: Schema.String,
  redirect_uris: Names,
  client_id_hash: Schema.String,
  client_secret_hash: Schema.String,
  permissions: Names,
  push_updates: Schema.Boolean,
  push_format: Schema.Literal("seed", "gds-sso"),
  require_pkce: Schema.Boolean,
  require_two_step: Schema.Boolean,
  retired: Schema.Boolean,
  created_at: Timestamp
})

export const toApplication = (row: typeof ApplicationRow.Type): Application => ({
  id: row.id,
  name: row.name,
  description: row.description,
  homeUri: row.home_uri,
  redirectUris: row.redirect_uris,
  clientIdHash: row.client_id_hash,
  clientSecretHash: row.client_secret_hash,
  permissions: row.permissions,
  pushUpdates: row.push_updates,
  pushFormat: row.push_format,
  requirePkce: row.require_pkce,
  requireTwoStep: row.require_two_step,
  retired: row.retired,
  createdAt: row.created_at
})

type ApplicationMethods = Pick<
  SsoStore["Type"],
  | "insertApplication"
  | "updateApplication"
  | "applicationById"
  | "applicationByName"
  | "applicationByClientIdHash"
  | "listApplications"
>

/** The applications; those found by client id are kept in memory while the store hears every change. */
export const applicationMethods = ({ firstRow, memory, rows, sql, write }: SsoSqlTools): ApplicationMethods => {
  const applicationsByClientId = memory.table<Application>(1_000)
  const applicationColumns = sql.unsafe(`id, name, description, home_uri, redirect_uris, client_id_hash,
    client_secret_hash, permissions, push_updates, push_format, require_pkce, require_two_step, retired, created_at`)

  const applicationWhere = (operation: string, condition: Effect.Effect<ReadonlyArray<unknown>, SqlError>) =>
    Effect.map(firstRow(operation, ApplicationRow, condition), Option.map(toApplication))

  return {
    insertApplication: (application) =>
      write("insertApplication", sql`
        INSERT INTO sso.applications (id, name, description, home_uri, redirect_uris, client_id_hash,
          client_secret_hash, permissions, push_updates, push_format, require_pkce, require_two_step, retired, created_at)
        VALUES (${application.id}, ${application.name}, ${application.description}, ${application.homeUri},
          ${json(application.redirectUris)}::jsonb, ${application.clientIdHash}, ${application.clientSecretHash},
          ${json(application.permissions)}::jsonb, ${application.pushUpdates}, ${application.pushFormat},
          ${application.requirePkce}, ${application.requireTwoStep}, ${application.retired}, ${timestamp(application.createdAt)}::timestamptz)`),
    updateApplication: (application) =>
      write("updateApplication", sql`
        UPDATE sso.applications SET name = ${application.name}, description = ${application.description},
          home_uri = ${application.homeUri}, redirect_uris = ${json(application.redirectUris)}::jsonb,
          client_id_hash = ${application.clientIdHash}, client_secret_hash = ${application.clientSecretHash},
          permissions = ${json(application.permissions)}::jsonb, push_updates = ${application.pushUpdates},
          push_format = ${application.pushFormat}, require_pkce = ${application.requirePkce},
          require_two_step = ${application.requireTwoStep},
          retired = ${application.retired}
        WHERE id = ${application.id}`),
    applicationById: (id) =>
      storable(id)
        ? applicationWhere("applicationById", sql`SELECT ${applicationColumns} FROM sso.applications WHERE id = ${id}`)
        : Effect.succeed(Option.none()),
    applicationByName: (name) =>
      storable(name)
        ? applicationWhere("applicationByName", sql`SELECT ${applicationColumns} FROM sso.applications WHERE name = ${name}`)
        : Effect.succeed(Option.none()),
    applicationByClientIdHash: (hash) =>
      applicationsByClientId.lookup(hash, Effect.suspend(() => applicationWhere(
        "applicationByClientIdHash",
        sql`SELECT ${applicationColumns} FROM sso.applications WHERE client_id_hash = ${hash}`
      ))),
    listApplications: Effect.map(
      rows("listApplications", ApplicationRow, sql`SELECT ${applicationColumns} FROM sso.applications ORDER BY name`),
      (found) => found.map(toApplication)
    )
  }
}
