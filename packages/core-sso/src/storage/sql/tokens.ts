import { TransactionConnection } from "@effect/sql/SqlClient"
import { Effect, Option, Schema } from "effect"
import { SIGNIN } from "../../domain/permissions"
import type { AccessToken, Grant, RefreshToken } from "../../domain/records"
import type { RefreshExchange, RefreshExchangeOutcome, SsoStore, TokenHolder, TokenSelection } from "../SsoStore"
import { ApplicationRow, toApplication } from "./applications"
import { makeBatches } from "./batches"
import { joinedPart, json, Names, OptionalTimestamp, storable, timestamp, Timestamp } from "./columns"
import type { SsoSqlTools } from "./tools"
import { toUser, UserRow } from "./users"

const GrantRow = Schema.Struct({
  code_hash: Schema.String,
  application_id: Schema.String,
  user_uid: Schema.String,
  redirect_uri: Schema.String,
  code_challenge: Schema.NullOr(Schema.String),
  scopes: Names,
  nonce: Schema.NullOr(Schema.String),
  auth_time: Timestamp,
  created_at: Timestamp,
  expires_at: Timestamp,
  used_at: OptionalTimestamp,
  first_use: Schema.Boolean
})

const toGrant = (row: typeof GrantRow.Type): Grant => ({
  codeHash: row.code_hash,
  applicationId: row.application_id,
  userUid: row.user_uid,
  redirectUri: row.redirect_uri,
  codeChallenge: row.code_challenge,
  scopes: row.scopes,
  nonce: row.nonce,
  authTime: row.auth_time,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  usedAt: row.used_at
})

const AccessTokenRow = Schema.Struct({
  id: Schema.String,
  token_hash: Schema.String,
  kind: Schema.Literal("oauth", "api"),
  application_id: Schema.String,
  user_uid: Schema.String,
  scopes: Names,
  grant_code_hash: Schema.NullOr(Schema.String),
  chain_id: Schema.NullOr(Schema.String),
  created_at: Timestamp,
  expires_at: Timestamp,
  revoked_at: OptionalTimestamp
})

const toAccessToken = (row: typeof AccessTokenRow.Type): AccessToken => ({
  id: row.id,
  tokenHash: row.token_hash,
  kind: row.kind,
  applicationId: row.application_id,
  userUid: row.user_uid,
  scopes: row.scopes,
  grantCodeHash: row.grant_code_hash,
  chainId: row.chain_id,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  revokedAt: row.revoked_at
})

const RefreshTokenRow = Schema.Struct({
  id: Schema.String,
  token_hash: Schema.String,
  application_id: Schema.String,
  user_uid: Schema.String,
  scopes: Names,
  grant_code_hash: Schema.NullOr(Schema.String),
  chain_id: Schema.String,
  auth_time: Timestamp,
  created_at: Timestamp,
  used_at: OptionalTimestamp,
  revoked_at: OptionalTimestamp,
  first_use: Schema.Boolean
})

const toRefreshToken = (row: typeof RefreshTokenRow.Type): RefreshToken => ({
  id: row.id,
  tokenHash: row.token_hash,
  applicationId: row.application_id,
  userUid: row.user_uid,
  scopes: row.scopes,
  grantCodeHash: row.grant_code_hash,
  chainId: row.chain_id,
  authTime: row.auth_time,
  createdAt: row.created_at,
  usedAt: row.used_at,
  revokedAt: row.revoked_at
})

const holderToken = joinedPart("t", "token", AccessTokenRow)
const holderApplication = joinedPart("a", "application", ApplicationRow)
const holderUser = joinedPart("u", "user", UserRow)
const holderColumns = [holderToken.select, holderApplication.select, holderUser.select].join(", ")

const HolderRow = Schema.Struct({
  token: AccessTokenRow,
  application: ApplicationRow,
  user: UserRow,
  permissions: Schema.NullOr(Names)
})

const refreshHolderToken = joinedPart("t", "token", RefreshTokenRow)

const RefreshExchangeRow = Schema.Struct({
  position: Schema.Number,
  token: RefreshTokenRow,
  user: UserRow,
  permissions: Schema.NullOr(Names),
  exchanged: Schema.Boolean
})
const CountRow = Schema.Struct({ count: Schema.Number })
const ApplicationIdRow = Schema.Struct({ application_id: Schema.String })

type TokenMethods = Pick<
  SsoStore["Type"],
  | "insertGrant"
  | "useGrant"
  | "insertAccessToken"
  | "accessTokenByHash"
  | "tokenHolder"
  | "tokenHolderInMemory"
  | "accessTokenById"
  | "apiTokensOf"
  | "insertRefreshToken"
  | "refreshTokenByHash"
  | "exchangeRefreshToken"
  | "revokeTokens"
  | "applicationsUsedBy"
>

/**
 * Authorization codes, access and refresh tokens. Token holders are kept in memory while the store hears every
 * change; refresh grants that arrive together share a statement.
 */
export const tokenMethods = ({ firstRow, memory, rows, sql, storeError }: SsoSqlTools) => Effect.gen(function*() {
  const holders = memory.table<TokenHolder>(10_000)

  const tokenCondition = (selection: TokenSelection) =>
    "grantCodeHash" in selection
      ? sql`grant_code_hash = ${selection.grantCodeHash}`
      : "chainId" in selection
      ? sql`chain_id = ${selection.chainId}`
      : "userUid" in selection
      ? sql`user_uid = ${selection.userUid}`
      : "chainsOf" in selection
      ? sql`user_uid = ${selection.chainsOf} AND chain_id IS NOT NULL`
      : sql`id = ${selection.accessTokenId}`

  const readTokenHolder = (hash: string) =>
    Effect.map(
      firstRow("tokenHolder", HolderRow, Effect.map(
        sql<Record<string, unknown>>`
          SELECT ${sql.unsafe(holderColumns)}, p.names AS permissions
          FROM sso.access_tokens t
          JOIN sso.applications a ON a.id = t.application_id
          JOIN sso.users u ON u.uid = t.user_uid
          LEFT JOIN sso.permissions p ON p.user_uid = t.user_uid AND p.application_id = t.application_id
          WHERE t.token_hash = ${hash}`,
        (found) =>
          found.map((row) => ({
            token: holderToken.take(row),
            application: holderApplication.take(row),
            user: holderUser.take(row),
            permissions: row.permissions
          }))
      )),
      Option.map((row) => ({
        accessToken: toAccessToken(row.token),
        application: toApplication(row.application),
        user: toUser(row.user),
        permissions: row.permissions ?? []
      }))
    )


  /**
   * Refresh grants in one statement (see `SsoStore.exchangeRefreshToken`), their tokens distinct. `may_exchange` is
   * `accessProblem` (domain/access.ts) finding nothing, with the token the application's, unused and unrevoked.
   */
  const exchangeRefreshTokens = (exchanges: ReadonlyArray<RefreshExchange>) =>
    Effect.map(
      rows("exchangeRefreshToken", RefreshExchangeRow, Effect.map(
        sql<Record<string, unknown>>`
          WITH input AS (
            SELECT * FROM jsonb_to_recordset(${
          json(exchanges.map((exchange, position) => ({
            position,
            token_hash: exchange.tokenHash,
            application_id: exchange.application.id,
            application_live: !exchange.application.retired,
            now: timestamp(exchange.now),
            access_id: exchange.accessToken.id,
            access_hash: exchange.accessToken.tokenHash,
            access_expires_at: timestamp(exchange.accessToken.expiresAt),
            refresh_id: exchange.refreshToken.id,
            refresh_hash: exchange.refreshToken.tokenHash
          })))
        }::jsonb) AS i(position integer, token_hash text, application_id text, application_live boolean,
              now timestamptz, access_id text, access_hash text, access_expires_at timestamptz, refresh_id text,
              refresh_hash text)
          ), found AS (
            SELECT i.position, i.now AS exchange_now, i.access_id, i.access_hash, i.access_expires_at, i.refresh_id,
              i.refresh_hash, ${sql.unsafe(refreshHolderToken.select)},
              ${sql.unsafe(holderUser.select)}, p.names AS permissions,
              (t.application_id = i.application_id AND t.used_at IS NULL AND t.revoked_at IS NULL
                AND u.suspended_at IS NULL AND i.application_live
                AND COALESCE(p.names @> ${json([SIGNIN])}::jsonb, false)) AS may_exchange
            FROM input i
            JOIN sso.refresh_tokens t ON t.token_hash = i.token_hash
            JOIN sso.users u ON u.uid = t.user_uid
            LEFT JOIN sso.permissions p ON p.user_uid = t.user_uid AND p.application_id = t.application_id
            -- without it the planner guesses many input rows and reads the whole table instead of its index
            WHERE t.token_hash = ANY (ARRAY(SELECT token_hash FROM input))
          ), used AS (
            UPDATE sso.refresh_tokens r SET used_at = f.exchange_now
            FROM found f
            WHERE r.id = f.token__id AND f.may_exchange AND r.used_at IS NULL
            RETURNING f.position, f.exchange_now, f.access_id, f.access_hash, f.access_expires_at, f.refresh_id,
              f.refresh_hash, r.application_id, r.user_uid, r.scopes, r.grant_code_hash, r.chain_id, r.auth_time
          ), issued_access AS (
            INSERT INTO sso.access_tokens (id, token_hash, kind, application_id, user_uid, scopes, grant_code_hash,
              chain_id, created_at, expires_at, revoked_at)
            SELECT access_id, access_hash, 'oauth', application_id, user_uid, scopes, grant_code_hash, chain_id,
              exchange_now, access_expires_at, NULL
            FROM used
          ), issued_refresh AS (
            INSERT INTO sso.refresh_tokens (id, token_hash, application_id, user_uid, scopes, grant_code_hash, chain_id,
              auth_time, created_at, used_at, revoked_at)
            SELECT refresh_id, refresh_hash, application_id, user_uid, scopes, grant_code_hash, chain_id, auth_time,
              exchange_now, NULL, NULL
            FROM used
          )
          SELECT f.position, ${sql.unsafe(refreshHolderToken.names)}, ${sql.unsafe(holderUser.names)}, f.permissions,
            EXISTS (SELECT 1 FROM used WHERE used.position = f.position) AS exchanged
          FROM found f`,
        (found) =>
          found.map((row) => ({
            position: row.position,
            token: Object.assign(refreshHolderToken.take(row), { first_use: false }),
            user: holderUser.take(row),
            permissions: row.permissions,
            exchanged: row.exchanged
          }))
      )),
      (found) => {
        const outcomes = exchanges.map(() => Option.none<RefreshExchangeOutcome>())
        for (const row of found) {
          outcomes[row.position] = Option.some({
            holder: { refreshToken: toRefreshToken(row.token), user: toUser(row.user), permissions: row.permissions ?? [] },
            exchanged: row.exchanged
          })
        }
        return outcomes
      }
    )

  // Under load, one statement serves the grants that arrive while another runs: a round trip and a commit for many.
  // One at a time makes the batches larger, and each statement's write wakes a database backend, which costs the
  // server's thread more than the wait (bench/README.md, SSO).
  const exchangeInBatches = yield* makeBatches({
    maxRunning: 1,
    maxSize: 64,
    keyOf: (exchange: RefreshExchange) => exchange.tokenHash,
    run: exchangeRefreshTokens
  })

  const methods: TokenMethods = {
    insertGrant: (grant) =>
      sql`
        INSERT INTO sso.grants (code_hash, application_id, user_uid, redirect_uri, code_challenge, scopes, nonce,
          auth_time, created_at, expires_at, used_at)
        VALUES (${grant.codeHash}, ${grant.applicationId}, ${grant.userUid}, ${grant.redirectUri},
          ${grant.codeChallenge}, ${json(grant.scopes)}::jsonb, ${grant.nonce}, ${timestamp(grant.authTime)}::timestamptz,
          ${timestamp(grant.createdAt)}::timestamptz, ${timestamp(grant.expiresAt)}::timestamptz,
          ${timestamp(grant.usedAt)}::timestamptz)`.pipe(Effect.asVoid, Effect.mapError(storeError("insertGrant"))),
    // A CTE sees the row as it was before the statement: `used.code_hash` is set only on the first use.
    useGrant: (codeHash, now) =>
      Effect.map(
        firstRow("useGrant", GrantRow, sql`
          WITH used AS (
            UPDATE sso.grants SET used_at = ${timestamp(now)}::timestamptz
            WHERE code_hash = ${codeHash} AND used_at IS NULL
            RETURNING code_hash
          )
          SELECT g.code_hash, g.application_id, g.user_uid, g.redirect_uri, g.code_challenge, g.scopes, g.nonce,
            g.auth_time, g.created_at, g.expires_at,
            COALESCE(g.used_at, ${timestamp(now)}::timestamptz) AS used_at,
            (used.code_hash IS NOT NULL) AS first_use
          FROM sso.grants g LEFT JOIN used ON used.code_hash = g.code_hash
          WHERE g.code_hash = ${codeHash}`),
        Option.map((row) => ({ record: toGrant(row), firstUse: row.first_use }))
      ),

    insertAccessToken: (token) =>
      sql`
        INSERT INTO sso.access_tokens (id, token_hash, kind, application_id, user_uid, scopes, grant_code_hash,
          chain_id, created_at, expires_at, revoked_at)
        VALUES (${token.id}, ${token.tokenHash}, ${token.kind}, ${token.applicationId}, ${token.userUid},
          ${json(token.scopes)}::jsonb, ${token.grantCodeHash}, ${token.chainId},
          ${timestamp(token.createdAt)}::timestamptz, ${timestamp(token.expiresAt)}::timestamptz,
          ${timestamp(token.revokedAt)}::timestamptz)`.pipe(Effect.asVoid, Effect.mapError(storeError("insertAccessToken"))),
    accessTokenByHash: (hash) =>
      Effect.map(
        firstRow("accessTokenByHash", AccessTokenRow, sql`SELECT * FROM sso.access_tokens WHERE token_hash = ${hash}`),
        Option.map(toAccessToken)
      ),
    tokenHolder: (hash) => holders.lookup(hash, readTokenHolder(hash)),
    tokenHolderInMemory: holders.peek,
    accessTokenById: (id) =>
      storable(id)
        ? Effect.map(
          firstRow("accessTokenById", AccessTokenRow, sql`SELECT * FROM sso.access_tokens WHERE id = ${id}`),
          Option.map(toAccessToken)
        )
        : Effect.succeed(Option.none()),
    apiTokensOf: (uid) =>
      Effect.map(
        rows("apiTokensOf", AccessTokenRow, sql`
          SELECT * FROM sso.access_tokens WHERE user_uid = ${uid} AND kind = 'api' ORDER BY created_at DESC, id`),
        (found) => found.map(toAccessToken)
      ),
    insertRefreshToken: (token) =>
      sql`
        INSERT INTO sso.refresh_tokens (id, token_hash, application_id, user_uid, scopes, grant_code_hash, chain_id,
          auth_time, created_at, used_at, revoked_at)
        VALUES (${token.id}, ${token.tokenHash}, ${token.applicationId}, ${token.userUid}, ${json(token.scopes)}::jsonb,
          ${token.grantCodeHash}, ${token.chainId}, ${timestamp(token.authTime)}::timestamptz,
          ${timestamp(token.createdAt)}::timestamptz, ${timestamp(token.usedAt)}::timestamptz,
          ${timestamp(token.revokedAt)}::timestamptz)`.pipe(Effect.asVoid, Effect.mapError(storeError("insertRefreshToken"))),
    refreshTokenByHash: (hash) =>
      Effect.map(
        firstRow("refreshTokenByHash", RefreshTokenRow, sql`
          SELECT *, false AS first_use FROM sso.refresh_tokens WHERE token_hash = ${hash}`),
        Option.map(toRefreshToken)
      ),
    exchangeRefreshToken: (exchange) =>
      Effect.flatMap(
        Effect.serviceOption(TransactionConnection),
        (caller) =>
          Option.isSome(caller) ? Effect.map(exchangeRefreshTokens([exchange]), (found) => found[0]!) : exchangeInBatches(exchange)
      ),
    revokeTokens: (selection, now) =>
      Effect.map(
        rows("revokeTokens", CountRow, sql`
          WITH access AS (
            UPDATE sso.access_tokens SET revoked_at = ${timestamp(now)}::timestamptz
            WHERE ${tokenCondition(selection)} AND revoked_at IS NULL
            RETURNING 1
          ), refresh AS (
            UPDATE sso.refresh_tokens SET revoked_at = ${timestamp(now)}::timestamptz
            WHERE ${"accessTokenId" in selection ? sql`false` : tokenCondition(selection)} AND revoked_at IS NULL
            RETURNING 1
          )
          SELECT ((SELECT count(*) FROM access) + (SELECT count(*) FROM refresh))::integer AS count`),
        (found) => found[0]?.count ?? 0
      ),
    applicationsUsedBy: (uid) =>
      Effect.map(
        rows("applicationsUsedBy", ApplicationIdRow, sql`
          SELECT DISTINCT application_id FROM sso.access_tokens WHERE user_uid = ${uid} ORDER BY application_id`),
        (found) => found.map((row) => row.application_id)
      )
  }
  return methods
})
