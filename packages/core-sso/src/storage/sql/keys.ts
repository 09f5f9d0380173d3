import { Effect, Option, Schema } from "effect"
import type { SsoStore } from "../SsoStore"
import { json, OptionalTimestamp, timestamp, Timestamp } from "./columns"
import type { SsoSqlTools } from "./tools"

const Jwk = Schema.Record({ key: Schema.String, value: Schema.Unknown })

const SigningKeyRow = Schema.Struct({
  kid: Schema.String,
  private_jwk: Jwk,
  public_jwk: Jwk,
  created_at: Timestamp,
  retired_at: OptionalTimestamp
})

const PushCredentialRow = Schema.Struct({
  application_id: Schema.String,
  token_id: Schema.String,
  token: Schema.String,
  expires_at: Timestamp
})

const credentialOf = (row: typeof PushCredentialRow.Type) => ({
  applicationId: row.application_id,
  tokenId: row.token_id,
  token: row.token,
  expiresAt: row.expires_at
})

type KeyMethods = Pick<
  SsoStore["Type"],
  | "signingKeys"
  | "insertSigningKey"
  | "retireSigningKeys"
  | "replacePrivateJwk"
  | "pushCredential"
  | "savePushCredential"
  | "allPushCredentials"
>

/** What the SSO signs and pushes with: the id_token signing keys and the push users' tokens. */
export const keyMethods = ({ firstRow, rows, sql, storeError }: SsoSqlTools): KeyMethods => ({
  signingKeys: Effect.map(
    rows("signingKeys", SigningKeyRow, sql`
      SELECT kid, private_jwk, public_jwk, created_at, retired_at FROM sso.signing_keys ORDER BY created_at DESC, kid`),
    (found) =>
      found.map((row) => ({
        kid: row.kid,
        privateJwk: row.private_jwk,
        publicJwk: row.public_jwk,
        createdAt: row.created_at,
        retiredAt: row.retired_at
      }))
  ),
  insertSigningKey: (key) =>
    sql`
      INSERT INTO sso.signing_keys (kid, private_jwk, public_jwk, created_at, retired_at)
      VALUES (${key.kid}, ${json(key.privateJwk)}::jsonb, ${json(key.publicJwk)}::jsonb,
        ${timestamp(key.createdAt)}::timestamptz, ${timestamp(key.retiredAt)}::timestamptz)`.pipe(
      Effect.asVoid,
      Effect.mapError(storeError("insertSigningKey"))
    ),
  retireSigningKeys: (keepKid, at) =>
    sql`
      UPDATE sso.signing_keys SET retired_at = ${timestamp(at)}::timestamptz
      WHERE kid <> ${keepKid} AND retired_at IS NULL`.pipe(Effect.asVoid, Effect.mapError(storeError("retireSigningKeys"))),

  replacePrivateJwk: (kid, privateJwk) =>
    sql`UPDATE sso.signing_keys SET private_jwk = ${json(privateJwk)}::jsonb WHERE kid = ${kid}`.pipe(
      Effect.asVoid,
      Effect.mapError(storeError("replacePrivateJwk"))
    ),

  pushCredential: (applicationId) =>
    Effect.map(
      firstRow("pushCredential", PushCredentialRow, sql`
        SELECT application_id, token_id, token, expires_at FROM sso.push_credentials WHERE application_id = ${applicationId}`),
      Option.map(credentialOf)
    ),
  allPushCredentials: Effect.map(
    rows("allPushCredentials", PushCredentialRow, sql`
      SELECT application_id, token_id, token, expires_at FROM sso.push_credentials ORDER BY application_id`),
    (found) => found.map(credentialOf)
  ),
  savePushCredential: (credential) =>
    sql`
      INSERT INTO sso.push_credentials (application_id, token_id, token, expires_at)
      VALUES (${credential.applicationId}, ${credential.tokenId}, ${credential.token}, ${timestamp(credential.expiresAt)}::timestamptz)
      ON CONFLICT (application_id) DO UPDATE
        SET token_id = EXCLUDED.token_id, token = EXCLUDED.token, expires_at = EXCLUDED.expires_at`.pipe(
      Effect.asVoid,
      Effect.mapError(storeError("savePushCredential"))
    )
})
