import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema } from "effect"
import type { TwoStep } from "../../domain/records"
import type { SsoStore } from "../SsoStore"
import { json, OptionalTimestamp, timestamp } from "./columns"
import type { SsoSqlTools } from "./tools"

const TwoStepRow = Schema.Struct({
  user_uid: Schema.String,
  secret: Schema.String,
  confirmed_at: OptionalTimestamp,
  last_step: Schema.NullOr(Schema.NumberFromString),
  recovery_codes_left: Schema.Number
})

const toTwoStep = (row: typeof TwoStepRow.Type): TwoStep => ({
  userUid: row.user_uid,
  secret: row.secret,
  confirmedAt: row.confirmed_at,
  lastStep: row.last_step,
  recoveryCodesLeft: row.recovery_codes_left
})

const SecretRow = Schema.Struct({ user_uid: Schema.String, secret: Schema.String })
const UserUidRow = Schema.Struct({ user_uid: Schema.String })

type TwoStepMethods = Pick<
  SsoStore["Type"],
  | "twoStepOf"
  | "beginTwoStep"
  | "confirmTwoStep"
  | "useTotpStep"
  | "useRecoveryCode"
  | "removeTwoStep"
  | "usersWithTwoStep"
  | "twoStepSecrets"
  | "replaceTwoStepSecret"
>

/** Two-step verification: the TOTP secrets and the recovery codes' hashes. Each check-and-use is one statement. */
export const twoStepMethods = ({ firstRow, rows, sql, storeError, transaction }: SsoSqlTools): TwoStepMethods => {
  const twoStepOf = (uid: string) =>
    Effect.map(
      firstRow("twoStepOf", TwoStepRow, sql`
        SELECT t.user_uid, t.secret, t.confirmed_at, t.last_step::text AS last_step,
          (SELECT count(*)::integer FROM sso.recovery_codes r WHERE r.user_uid = t.user_uid AND r.used_at IS NULL)
            AS recovery_codes_left
        FROM sso.two_step t WHERE t.user_uid = ${uid}`),
      Option.map(toTwoStep)
    )

  /** Whether the statement changed the row it names (it returns the row's `user_uid`). */
  const changedOne = (operation: string, statement: Effect.Effect<ReadonlyArray<unknown>, SqlError>) =>
    Effect.map(firstRow(operation, UserUidRow, statement), Option.isSome)
  const run = (operation: string, statement: Effect.Effect<unknown, SqlError>) =>
    Effect.mapError(statement, storeError(operation))

  return {
    twoStepOf,
    beginTwoStep: (uid, secret) =>
      Effect.zipRight(
        run("beginTwoStep", sql`
          INSERT INTO sso.two_step (user_uid, secret) VALUES (${uid}, ${secret}) ON CONFLICT (user_uid) DO NOTHING`),
        Effect.map(twoStepOf(uid), Option.getOrThrow)
      ),
    confirmTwoStep: (uid, { at, lastStep, recoveryCodeHashes }) =>
      transaction(Effect.gen(function*() {
        const confirmed = yield* changedOne("confirmTwoStep", sql`
          UPDATE sso.two_step SET confirmed_at = ${timestamp(at)}::timestamptz, last_step = ${lastStep}
          WHERE user_uid = ${uid} AND confirmed_at IS NULL
          RETURNING user_uid`)
        if (!confirmed) return false
        yield* run("confirmTwoStep", sql`DELETE FROM sso.recovery_codes WHERE user_uid = ${uid}`)
        yield* run("confirmTwoStep", sql`
          INSERT INTO sso.recovery_codes (user_uid, code_hash)
          SELECT ${uid}, hash FROM jsonb_array_elements_text(${json(recoveryCodeHashes)}::jsonb) AS h(hash)`)
        return true
      })),
    useTotpStep: (uid, step) =>
      changedOne("useTotpStep", sql`
        UPDATE sso.two_step SET last_step = ${step}
        WHERE user_uid = ${uid} AND confirmed_at IS NOT NULL AND (last_step IS NULL OR last_step < ${step})
        RETURNING user_uid`),
    useRecoveryCode: (uid, codeHash, at) =>
      changedOne("useRecoveryCode", sql`
        UPDATE sso.recovery_codes SET used_at = ${timestamp(at)}::timestamptz
        WHERE user_uid = ${uid} AND code_hash = ${codeHash} AND used_at IS NULL
        RETURNING user_uid`),
    removeTwoStep: (uid) =>
      transaction(Effect.zipRight(
        run("removeTwoStep", sql`DELETE FROM sso.recovery_codes WHERE user_uid = ${uid}`),
        changedOne("removeTwoStep", sql`DELETE FROM sso.two_step WHERE user_uid = ${uid} RETURNING user_uid`)
      )),
    usersWithTwoStep: Effect.map(
      rows("usersWithTwoStep", UserUidRow, sql`SELECT user_uid FROM sso.two_step WHERE confirmed_at IS NOT NULL ORDER BY user_uid`),
      (found) => found.map((row) => row.user_uid)
    ),
    twoStepSecrets: rows("twoStepSecrets", SecretRow, sql`SELECT user_uid, secret FROM sso.two_step ORDER BY user_uid`).pipe(
      Effect.map((found) => found.map((row) => ({ userUid: row.user_uid, secret: row.secret })))
    ),
    replaceTwoStepSecret: (uid, secret) =>
      Effect.asVoid(run("replaceTwoStepSecret", sql`UPDATE sso.two_step SET secret = ${secret} WHERE user_uid = ${uid}`))
  }
}
