import { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema } from "effect"
import type { User } from "../../domain/records"
import { AlreadyTaken } from "../SsoStore"
import type { SsoStore, StoreError } from "../SsoStore"
import { json, Names, OptionalTimestamp, storable, timestamp, Timestamp } from "./columns"
import { takenField } from "./tools"
import type { SsoSqlTools } from "./tools"

export const UserRow = Schema.Struct({
  uid: Schema.String,
  name: Schema.String,
  email: Schema.String,
  password_hash: Schema.NullOr(Schema.String),
  is_api_user: Schema.Boolean,
  organisation_slug: Schema.NullOr(Schema.String),
  organisation_content_id: Schema.NullOr(Schema.String),
  suspended_at: OptionalTimestamp,
  suspension_reason: Schema.NullOr(Schema.String),
  failed_sign_ins: Schema.Number,
  locked_until: OptionalTimestamp,
  created_at: Timestamp
})

export const toUser = (row: typeof UserRow.Type): User => ({
  uid: row.uid,
  name: row.name,
  email: row.email,
  passwordHash: row.password_hash,
  isApiUser: row.is_api_user,
  organisationSlug: row.organisation_slug,
  organisationContentId: row.organisation_content_id,
  suspendedAt: row.suspended_at,
  suspensionReason: row.suspension_reason,
  failedSignIns: row.failed_sign_ins,
  lockedUntil: row.locked_until,
  createdAt: row.created_at
})

const PermissionRow = Schema.Struct({ application_id: Schema.String, names: Names })

type UserMethods = Pick<
  SsoStore["Type"],
  | "insertUser"
  | "userByUid"
  | "userByEmail"
  | "listUsers"
  | "updateUser"
  | "setPasswordHash"
  | "setSuspension"
  | "recordFailedSignIn"
  | "clearFailedSignIns"
  | "permissionsOf"
  | "setPermissions"
>

/** The users and their permissions on each application. */
export const userMethods = ({ firstRow, rows, sql, storeError, write }: SsoSqlTools): UserMethods => {
  const userColumns = sql.unsafe(`uid, name, email, password_hash, is_api_user, organisation_slug,
    organisation_content_id, suspended_at, suspension_reason, failed_sign_ins, locked_until, created_at`)

  const userQuery = (operation: string, query: Effect.Effect<ReadonlyArray<unknown>, SqlError>) =>
    Effect.map(firstRow(operation, UserRow, query), Option.map(toUser))

  /** The user of `uid` as `query` finds or changes them; none for a uid no row can have (PostgreSQL refuses NUL). */
  const userOf = (uid: string, operation: string, query: () => Effect.Effect<ReadonlyArray<unknown>, SqlError>) =>
    storable(uid) ? userQuery(operation, query()) : Effect.succeed(Option.none<User>())

  return {
    insertUser: (user) =>
      write("insertUser", sql`
        INSERT INTO sso.users (uid, name, email, password_hash, is_api_user, organisation_slug,
          organisation_content_id, suspended_at, suspension_reason, failed_sign_ins, locked_until, created_at)
        VALUES (${user.uid}, ${user.name}, ${user.email}, ${user.passwordHash}, ${user.isApiUser},
          ${user.organisationSlug}, ${user.organisationContentId}, ${timestamp(user.suspendedAt)}::timestamptz,
          ${user.suspensionReason}, ${user.failedSignIns}, ${timestamp(user.lockedUntil)}::timestamptz,
          ${timestamp(user.createdAt)}::timestamptz)`),
    userByUid: (uid) => userOf(uid, "userByUid", () => sql`SELECT ${userColumns} FROM sso.users WHERE uid = ${uid}`),
    userByEmail: (email) =>
      storable(email)
        ? userQuery("userByEmail", sql`SELECT ${userColumns} FROM sso.users WHERE lower(email) = lower(${email})`)
        : Effect.succeed(Option.none()),
    listUsers: Effect.map(
      rows("listUsers", UserRow, sql`SELECT ${userColumns} FROM sso.users ORDER BY email`),
      (found) => found.map(toUser)
    ),
    updateUser: (uid, changes) =>
      userOf(uid, "updateUser", () => sql`
        UPDATE sso.users SET
          name = COALESCE(${changes.name ?? null}, name),
          email = COALESCE(${changes.email ?? null}, email),
          organisation_slug = CASE WHEN ${changes.organisationSlug !== undefined} THEN ${changes.organisationSlug ?? null}
            ELSE organisation_slug END,
          organisation_content_id = CASE WHEN ${changes.organisationContentId !== undefined}
            THEN ${changes.organisationContentId ?? null} ELSE organisation_content_id END
        WHERE uid = ${uid}
        RETURNING ${userColumns}`).pipe(
          Effect.catchTag("StoreError", (error): Effect.Effect<never, StoreError | AlreadyTaken> => {
            const field = error.cause instanceof SqlError ? takenField(error.cause) : undefined
            return field === undefined ? Effect.fail(error) : Effect.fail(new AlreadyTaken({ field }))
          })
        ),
    setPasswordHash: (uid, passwordHash) =>
      write("setPasswordHash", sql`UPDATE sso.users SET password_hash = ${passwordHash} WHERE uid = ${uid}`).pipe(
        Effect.catchTag("AlreadyTaken", (error) => Effect.die(error))
      ),
    setSuspension: (uid, suspension) =>
      userOf(uid, "setSuspension", () => sql`
        UPDATE sso.users SET suspended_at = ${timestamp(suspension?.at ?? null)}::timestamptz,
          suspension_reason = ${suspension?.reason ?? null}
        WHERE uid = ${uid}
        RETURNING ${userColumns}`),
    recordFailedSignIn: (uid, lock) => {
      // the right-hand sides of SET all read the row as it was
      const lockEnded = sql`locked_until <= ${timestamp(lock.at)}::timestamptz`
      const counted = sql`CASE WHEN ${lockEnded} THEN 1 ELSE failed_sign_ins + 1 END`
      return userOf(uid, "recordFailedSignIn", () => sql`
        UPDATE sso.users SET failed_sign_ins = ${counted},
          locked_until = CASE WHEN ${counted} >= ${lock.lockAfter} THEN ${timestamp(lock.lockUntil)}::timestamptz
            WHEN ${lockEnded} THEN NULL ELSE locked_until END
        WHERE uid = ${uid}
        RETURNING ${userColumns}`)
    },
    clearFailedSignIns: (uid) =>
      userOf(uid, "clearFailedSignIns", () => sql`
        UPDATE sso.users SET failed_sign_ins = 0, locked_until = NULL WHERE uid = ${uid} RETURNING ${userColumns}`),

    permissionsOf: (uid) =>
      Effect.map(
        rows("permissionsOf", PermissionRow, sql`
          SELECT application_id, names FROM sso.permissions WHERE user_uid = ${uid} ORDER BY application_id`),
        (found) => found.map((row) => ({ applicationId: row.application_id, permissions: row.names }))
      ),
    setPermissions: (uid, applicationId, names) =>
      (names.length === 0
        ? sql`DELETE FROM sso.permissions WHERE user_uid = ${uid} AND application_id = ${applicationId}`
        : sql`
          INSERT INTO sso.permissions (user_uid, application_id, names)
          VALUES (${uid}, ${applicationId}, ${json([...new Set(names)].sort())}::jsonb)
          ON CONFLICT (user_uid, application_id) DO UPDATE SET names = EXCLUDED.names`).pipe(
          Effect.asVoid,
          Effect.mapError(storeError("setPermissions"))
        )
  }
}
