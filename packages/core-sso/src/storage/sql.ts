import { decodeRows } from "@civicstack/kit"
import { SqlClient, TransactionConnection } from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import type { Context } from "effect"
import { Clock, Deferred, Duration, Effect, FiberRef, Layer, Option, Schedule, Schema, Stream } from "effect"
import { randomUUID } from "node:crypto"
import { SIGNIN } from "../domain/permissions"
import type { AccessToken, Application, Grant, RefreshToken, SsoEvent, User } from "../domain/records"
import { makeBatches } from "./batches"
import { makeReadMemory, type ReadMemory } from "./readMemory"
import { AlreadyTaken, SsoStore, StoreError } from "./SsoStore"
import type { RefreshExchange, RefreshExchangeOutcome, TokenHolder, TokenSelection } from "./SsoStore"

type Store = Context.Tag.Service<SsoStore>

const Names = Schema.Array(Schema.String)
const Timestamp = Schema.DateFromSelf
const OptionalTimestamp = Schema.NullOr(Schema.DateFromSelf)

const ApplicationRow = Schema.Struct({
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
  retired: Schema.Boolean,
  created_at: Timestamp
})

const toApplication = (row: typeof ApplicationRow.Type): Application => ({
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
  retired: row.retired,
  createdAt: row.created_at
})

const UserRow = Schema.Struct({
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

const toUser = (row: typeof UserRow.Type): User => ({
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

const SessionRow = Schema.Struct({
  id_hash: Schema.String,
  user_uid: Schema.String,
  csrf_token: Schema.String,
  auth_time: Timestamp,
  last_seen_at: Timestamp
})

const EventRow = Schema.Struct({
  at: Timestamp,
  kind: Schema.String,
  user_uid: Schema.NullOr(Schema.String),
  application_id: Schema.NullOr(Schema.String),
  detail: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})

const Jwk = Schema.Record({ key: Schema.String, value: Schema.Unknown })

const SigningKeyRow = Schema.Struct({
  kid: Schema.String,
  private_jwk: Jwk,
  public_jwk: Jwk,
  created_at: Timestamp,
  retired_at: OptionalTimestamp
})

const PermissionRow = Schema.Struct({ application_id: Schema.String, names: Names })

/**
 * The joined rows of `tokenHolder` and `exchangeRefreshToken` name each table's columns with its own prefix, so that the
 * row schemas above decode them.
 */
const joinedPart = (alias: string, part: string, row: { readonly fields: object }) => {
  const columns = Object.keys(row.fields).filter((column) => column !== "first_use")
  const names = columns.map((column) => `${part}__${column}`)
  return {
    /** The select list of this table's columns, each under its prefixed name. */
    select: columns.map((column, index) => `${alias}.${column} AS ${names[index]}`).join(", "),
    /** The prefixed names, for a select from a query that already selected them. */
    names: names.join(", "),
    /** This table's row out of a joined row. */
    take: (joined: Record<string, unknown>) => {
      const taken: Record<string, unknown> = {}
      for (let index = 0; index < columns.length; index++) taken[columns[index]!] = joined[names[index]!]
      return taken
    }
  }
}

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
const AttemptsRow = Schema.Struct({ count: Schema.Number, oldest: OptionalTimestamp, latest: OptionalTimestamp })
const CountRow = Schema.Struct({ count: Schema.Number })
const ApplicationIdRow = Schema.Struct({ application_id: Schema.String })

const timestamp = (date: Date | null) => (date === null ? null : date.toISOString())
const json = (value: unknown) => JSON.stringify(value)

/** PostgreSQL text cannot hold NUL: a value with one can match no stored row. */
const storable = (text: string) => !text.includes("\u0000")

const UNIQUE_FIELDS: Record<string, AlreadyTaken["field"]> = {
  applications_name_key: "name",
  applications_client_id_hash_key: "client_id",
  users_by_email: "email"
}

/** A unique index refused the row: which of our unique fields it was, if any. */
const takenField = (error: SqlError): AlreadyTaken["field"] | undefined => {
  const cause = error.cause as { readonly code?: unknown; readonly constraint?: unknown } | undefined
  return cause?.code === "23505" && typeof cause.constraint === "string" ? UNIQUE_FIELDS[cause.constraint] : undefined
}

/** An advisory lock of the sso schema's own: held while first-start setup or a bootstrap file is applied. */
const SETUP_LOCK_KEY = 5_463_118_922

/** Carries the caller's failure out of the transaction (rolling it back), told apart from the database's. */
class CallerFailure<E> {
  constructor(readonly error: E) {}
}

const PushCredentialRow = Schema.Struct({
  application_id: Schema.String,
  token_id: Schema.String,
  token: Schema.String,
  expires_at: Timestamp
})

const storeError = (operation: string) => (cause: unknown) =>
  new StoreError({ message: `sso store: ${operation} failed`, cause })

/** Carries a change to token holders in any copy; a payload starting `probe:` is a copy checking that it hears. */
const HOLDERS_CHANNEL = "civicstack_sso_token_holders"
const HOLDERS_CHANGED = "changed"
/** The payload announcing a failed attempt, followed by its time in milliseconds. */
const FAILED_ATTEMPT = "failed:"

/** Set by a change to token holders inside a transaction, so that the cache forgets them again once it commits. */
const holdersChangedInTransaction = FiberRef.unsafeMake(false)

export interface SqlStoreOptions {
  /**
   * LISTEN on the store's database (e.g. `PgClient.listen`). With it the store keeps token holders and applications in
   * memory, and every copy forgets them as soon as any copy commits a change to them; without it each lookup reads the database.
   */
  readonly listen?: (channel: string) => Stream.Stream<string, unknown>
}

export const makeSqlStore = (options: SqlStoreOptions = {}) => Effect.gen(function*() {
  const sql = yield* SqlClient
  const memory = makeReadMemory({ maxAge: Duration.minutes(1) })
  const holders = memory.table<TokenHolder>(10_000)
  const applicationsByClientId = memory.table<Application>(1_000)

  /** Runs a query, decoding its rows; database and decoding failures become a `StoreError`. */
  const rows = <A, I>(operation: string, schema: Schema.Schema<A, I>, query: Effect.Effect<ReadonlyArray<unknown>, SqlError>) =>
    query.pipe(
      Effect.flatMap(decodeRows(schema)),
      Effect.mapError(storeError(operation))
    )

  const firstRow = <A, I>(operation: string, schema: Schema.Schema<A, I>, query: Effect.Effect<ReadonlyArray<unknown>, SqlError>) =>
    Effect.map(rows(operation, schema, query), (found) => Option.fromNullable(found[0]))

  const write = (operation: string, query: Effect.Effect<unknown, SqlError>) =>
    query.pipe(
      Effect.asVoid,
      Effect.catchAll((error): Effect.Effect<void, AlreadyTaken | StoreError> => {
        const field = takenField(error)
        return field === undefined ? Effect.fail(storeError(operation)(error)) : Effect.fail(new AlreadyTaken({ field }))
      })
    )

  /** The caller's effect in a transaction; its own failures roll it back and come out as they were. */
  const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | StoreError, R> =>
    sql.withTransaction(Effect.mapError(effect, (error) => new CallerFailure(error))).pipe(
      Effect.catchAllDefect((defect) => defect instanceof SqlError ? Effect.fail(defect) : Effect.die(defect)),
      Effect.mapError((failure): E | StoreError =>
        failure instanceof CallerFailure ? failure.error : storeError("transaction")(failure)
      ),
      // a read between the change and the commit may have kept the holder as it was before
      Effect.ensuring(Effect.flatMap(FiberRef.get(holdersChangedInTransaction), (changed) =>
        changed ? Effect.sync(memory.invalidate) : Effect.void)),
      Effect.locally(holdersChangedInTransaction, false)
    )

  const atomically = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | StoreError, R> =>
    Effect.flatMap(Effect.serviceOption(TransactionConnection), (caller) => Option.isSome(caller) ? effect : transaction(effect))

  /** Tells every copy, this one at once and the others when it commits, to forget the token holders they keep. */
  const announceHoldersChanged = Effect.zipRight(
    Effect.zipRight(Effect.sync(memory.invalidate), FiberRef.set(holdersChangedInTransaction, true)),
    Effect.mapError(sql`SELECT pg_notify(${HOLDERS_CHANNEL}, ${HOLDERS_CHANGED})`, storeError("announceHoldersChanged"))
  )

  /** A change that can alter `tokenHolder` answers: it and its announcement are kept or lost together. */
  const changingHolders = <Args extends ReadonlyArray<unknown>, A, E>(change: (...args: Args) => Effect.Effect<A, E>) =>
  (...args: Args): Effect.Effect<A, E | StoreError> => atomically(Effect.tap(change(...args), () => announceHoldersChanged))

  const applicationColumns = sql.unsafe(`id, name, description, home_uri, redirect_uris, client_id_hash,
    client_secret_hash, permissions, push_updates, push_format, require_pkce, retired, created_at`)
  const userColumns = sql.unsafe(`uid, name, email, password_hash, is_api_user, organisation_slug,
    organisation_content_id, suspended_at, suspension_reason, failed_sign_ins, locked_until, created_at`)

  const applicationWhere = (operation: string, condition: Effect.Effect<ReadonlyArray<unknown>, SqlError>) =>
    Effect.map(firstRow(operation, ApplicationRow, condition), Option.map(toApplication))

  const userQuery = (operation: string, query: Effect.Effect<ReadonlyArray<unknown>, SqlError>) =>
    Effect.map(firstRow(operation, UserRow, query), Option.map(toUser))

  const tokenCondition = (selection: TokenSelection) =>
    "grantCodeHash" in selection
      ? sql`grant_code_hash = ${selection.grantCodeHash}`
      : "chainId" in selection
      ? sql`chain_id = ${selection.chainId}`
      : "userUid" in selection
      ? sql`user_uid = ${selection.userUid}`
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

  const store: Store = {
    exclusively: (effect) =>
      transaction(Effect.zipRight(
        Effect.mapError(sql`SELECT pg_advisory_xact_lock(${SETUP_LOCK_KEY})`, storeError("exclusively")),
        effect
      )),
    atomically,
    pushCredential: (applicationId) =>
      Effect.map(
        firstRow("pushCredential", PushCredentialRow, sql`
          SELECT application_id, token_id, token, expires_at FROM sso.push_credentials WHERE application_id = ${applicationId}`),
        Option.map((row) => ({ applicationId: row.application_id, tokenId: row.token_id, token: row.token, expiresAt: row.expires_at }))
      ),
    savePushCredential: (credential) =>
      sql`
        INSERT INTO sso.push_credentials (application_id, token_id, token, expires_at)
        VALUES (${credential.applicationId}, ${credential.tokenId}, ${credential.token}, ${timestamp(credential.expiresAt)}::timestamptz)
        ON CONFLICT (application_id) DO UPDATE
          SET token_id = EXCLUDED.token_id, token = EXCLUDED.token, expires_at = EXCLUDED.expires_at`.pipe(
        Effect.asVoid,
        Effect.mapError(storeError("savePushCredential"))
      ),
    insertApplication: (application) =>
      write("insertApplication", sql`
        INSERT INTO sso.applications (id, name, description, home_uri, redirect_uris, client_id_hash,
          client_secret_hash, permissions, push_updates, push_format, require_pkce, retired, created_at)
        VALUES (${application.id}, ${application.name}, ${application.description}, ${application.homeUri},
          ${json(application.redirectUris)}::jsonb, ${application.clientIdHash}, ${application.clientSecretHash},
          ${json(application.permissions)}::jsonb, ${application.pushUpdates}, ${application.pushFormat},
          ${application.requirePkce}, ${application.retired}, ${timestamp(application.createdAt)}::timestamptz)`),
    updateApplication: (application) =>
      write("updateApplication", sql`
        UPDATE sso.applications SET name = ${application.name}, description = ${application.description},
          home_uri = ${application.homeUri}, redirect_uris = ${json(application.redirectUris)}::jsonb,
          client_id_hash = ${application.clientIdHash}, client_secret_hash = ${application.clientSecretHash},
          permissions = ${json(application.permissions)}::jsonb, push_updates = ${application.pushUpdates},
          push_format = ${application.pushFormat}, require_pkce = ${application.requirePkce},
          retired = ${application.retired}
        WHERE id = ${application.id}`),
    applicationById: (id) =>
      applicationWhere("applicationById", sql`SELECT ${applicationColumns} FROM sso.applications WHERE id = ${id}`),
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
    ),

    insertUser: (user) =>
      write("insertUser", sql`
        INSERT INTO sso.users (uid, name, email, password_hash, is_api_user, organisation_slug,
          organisation_content_id, suspended_at, suspension_reason, failed_sign_ins, locked_until, created_at)
        VALUES (${user.uid}, ${user.name}, ${user.email}, ${user.passwordHash}, ${user.isApiUser},
          ${user.organisationSlug}, ${user.organisationContentId}, ${timestamp(user.suspendedAt)}::timestamptz,
          ${user.suspensionReason}, ${user.failedSignIns}, ${timestamp(user.lockedUntil)}::timestamptz,
          ${timestamp(user.createdAt)}::timestamptz)`),
    userByUid: (uid) =>
      storable(uid)
        ? userQuery("userByUid", sql`SELECT ${userColumns} FROM sso.users WHERE uid = ${uid}`)
        : Effect.succeed(Option.none()),
    userByEmail: (email) =>
      storable(email)
        ? userQuery("userByEmail", sql`SELECT ${userColumns} FROM sso.users WHERE lower(email) = lower(${email})`)
        : Effect.succeed(Option.none()),
    listUsers: Effect.map(
      rows("listUsers", UserRow, sql`SELECT ${userColumns} FROM sso.users ORDER BY email`),
      (found) => found.map(toUser)
    ),
    updateUser: (uid, changes) =>
      userQuery("updateUser", sql`
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
      userQuery("setSuspension", sql`
        UPDATE sso.users SET suspended_at = ${timestamp(suspension?.at ?? null)}::timestamptz,
          suspension_reason = ${suspension?.reason ?? null}
        WHERE uid = ${uid}
        RETURNING ${userColumns}`),
    recordFailedSignIn: (uid, lock) =>
      userQuery("recordFailedSignIn", sql`
        UPDATE sso.users SET failed_sign_ins = failed_sign_ins + 1,
          locked_until = CASE WHEN failed_sign_ins + 1 >= ${lock.lockAfter}
            THEN ${timestamp(lock.lockUntil)}::timestamptz ELSE locked_until END
        WHERE uid = ${uid}
        RETURNING ${userColumns}`),
    clearFailedSignIns: (uid) =>
      userQuery("clearFailedSignIns", sql`
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
        ),

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
      ),

    recordFailedAttempt: (keys, at, forgetBefore) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`
          DELETE FROM sso.failed_attempts
          WHERE key IN (SELECT jsonb_array_elements_text(${json(keys)}::jsonb))
            AND at < ${timestamp(forgetBefore)}::timestamptz`
        yield* sql`
          INSERT INTO sso.failed_attempts (key, at)
          SELECT key, ${timestamp(at)}::timestamptz FROM jsonb_array_elements_text(${json(keys)}::jsonb) AS k(key)`
        yield* sql`SELECT pg_notify(${HOLDERS_CHANNEL}, ${`${FAILED_ATTEMPT}${at.getTime()}`})`
      })).pipe(
        Effect.tap(() => Effect.sync(() => memory.failures.heard(at.getTime()))),
        Effect.mapError(storeError("recordFailedAttempt"))
      ),
    failedAttempts: (keys, since) =>
      Effect.suspend(() => {
        if (memory.failures.noneSince(since.getTime())) return Effect.succeed(keys.map(() => ({ count: 0, oldest: null })))
        const withLatest = memory.failures.unknown
        return memory.failures.learnFrom(Effect.map(
          rows("failedAttempts", AttemptsRow, sql`
            SELECT count(f.at)::integer AS count, min(f.at) AS oldest,
              ${withLatest ? sql`(SELECT max(at) FROM sso.failed_attempts)` : sql`NULL::timestamptz`} AS latest
            FROM jsonb_array_elements_text(${json(keys)}::jsonb) WITH ORDINALITY AS k(key, position)
            LEFT JOIN sso.failed_attempts f ON f.key = k.key AND f.at > ${timestamp(since)}::timestamptz
            GROUP BY k.position ORDER BY k.position`),
          (found) => ({
            answer: found.map(({ count, oldest }) => ({ count, oldest })),
            latest: withLatest && found.length > 0 ? (found[0]!.latest?.getTime() ?? -Infinity) : undefined
          })
        ))
      }),

    insertSession: (session) =>
      sql`
        INSERT INTO sso.sessions (id_hash, user_uid, csrf_token, auth_time, last_seen_at)
        VALUES (${session.idHash}, ${session.userUid}, ${session.csrfToken}, ${timestamp(session.authTime)}::timestamptz,
          ${timestamp(session.lastSeenAt)}::timestamptz)`.pipe(Effect.asVoid, Effect.mapError(storeError("insertSession"))),
    touchSession: (idHash, idleSince, now) =>
      Effect.map(
        firstRow("touchSession", SessionRow, sql`
          UPDATE sso.sessions SET last_seen_at = ${timestamp(now)}::timestamptz
          WHERE id_hash = ${idHash} AND last_seen_at > ${timestamp(idleSince)}::timestamptz
          RETURNING id_hash, user_uid, csrf_token, auth_time, last_seen_at`),
        Option.map((row) => ({
          idHash: row.id_hash,
          userUid: row.user_uid,
          csrfToken: row.csrf_token,
          authTime: row.auth_time,
          lastSeenAt: row.last_seen_at
        }))
      ),
    deleteSession: (idHash) =>
      sql`DELETE FROM sso.sessions WHERE id_hash = ${idHash}`.pipe(Effect.asVoid, Effect.mapError(storeError("deleteSession"))),
    deleteSessionsOf: (uid) =>
      sql`DELETE FROM sso.sessions WHERE user_uid = ${uid}`.pipe(Effect.asVoid, Effect.mapError(storeError("deleteSessionsOf"))),

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

    appendEvent: (event) =>
      sql`
        INSERT INTO sso.events (at, kind, user_uid, application_id, detail)
        VALUES (${timestamp(event.at)}::timestamptz, ${event.kind}, ${event.userUid}, ${event.applicationId},
          ${json(event.detail)}::jsonb)`.pipe(Effect.asVoid, Effect.mapError(storeError("appendEvent"))),
    events: ({ limit, userUid }) =>
      Effect.map(
        rows("events", EventRow, sql`
          SELECT at, kind, user_uid, application_id, detail FROM sso.events
          WHERE ${userUid === undefined ? sql`true` : sql`user_uid = ${userUid}`}
          ORDER BY at DESC, id DESC LIMIT ${limit}`),
        (found): ReadonlyArray<SsoEvent> =>
          found.map((row) => ({
            at: row.at,
            kind: row.kind,
            userUid: row.user_uid,
            applicationId: row.application_id,
            detail: row.detail
          }))
      )
  }
  yield* listenForChanges(options, memory, sql)
  return {
    ...store,
    updateApplication: changingHolders(store.updateApplication),
    updateUser: changingHolders(store.updateUser),
    setSuspension: changingHolders(store.setSuspension),
    setPermissions: changingHolders(store.setPermissions),
    revokeTokens: changingHolders(store.revokeTokens)
  } satisfies Store
})

/** How often a copy checks that it hears its own notifications (while it does, and until it does), and how long an echo may take. */
const PROBE_INTERVAL = Duration.seconds(1)
const PROBE_INTERVAL_UNHEARD = Duration.millis(100)
const DEAF_AFTER = Duration.seconds(3)

/**
 * Listens for the changes of every copy while the store is open. The cache answers only while this copy hears its
 * own probes come back: from the first echo (awaited here, up to `DEAF_AFTER`) until an echo is overdue, which a
 * listening connection that died quietly would cause. Probes measure the network, so they run on the real clock.
 */
const listenForChanges = (
  options: SqlStoreOptions,
  memory: ReadMemory,
  sql: SqlClient
) =>
  Effect.gen(function*() {
    const listen = options.listen
    if (listen === undefined) return
    const probe = `probe:${randomUUID()}`
    const realClock = Clock.make()
    let lastEcho = 0
    const firstEcho = yield* Deferred.make<void>()
    yield* listen(HOLDERS_CHANNEL).pipe(
      Stream.runForEach((payload) =>
        Effect.suspend(() => {
          if (payload.startsWith("probe:")) {
            if (payload !== probe) return Effect.void
            return Effect.flatMap(Clock.currentTimeMillis, (now) => {
              lastEcho = now
              if (!memory.enabled) memory.setEnabled(true)
              return Deferred.succeed(firstEcho, undefined)
            })
          }
          if (payload.startsWith(FAILED_ATTEMPT)) {
            const at = Number(payload.slice(FAILED_ATTEMPT.length))
            // a payload it cannot read leaves the copy counting failures in the database
            return Effect.sync(() => Number.isFinite(at) ? memory.failures.heard(at) : memory.setEnabled(false))
          }
          return Effect.sync(memory.invalidate)
        })
      ),
      Effect.ensuring(Effect.sync(() => memory.setEnabled(false))),
      Effect.catchAllCause((cause) =>
        Effect.logWarning("Stopped listening for sign-on changes; reading token holders from the database", cause)
      ),
      Effect.repeat(Schedule.spaced("1 second")),
      Effect.withClock(realClock),
      Effect.forkScoped
    )
    const checkHearing = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      if (memory.enabled && now - lastEcho > Duration.toMillis(DEAF_AFTER)) {
        memory.setEnabled(false)
        yield* Effect.logWarning("Sign-on change notifications stopped arriving; reading token holders from the database")
      }
      yield* Effect.ignore(sql`SELECT pg_notify(${HOLDERS_CHANNEL}, ${probe})`)
    })
    yield* checkHearing.pipe(
      Effect.zipRight(Effect.suspend(() => Effect.sleep(memory.enabled ? PROBE_INTERVAL : PROBE_INTERVAL_UNHEARD))),
      Effect.forever,
      Effect.withClock(realClock),
      Effect.forkScoped
    )
    yield* Deferred.await(firstEcho).pipe(Effect.timeout(DEAF_AFTER), Effect.ignore, Effect.withClock(realClock))
  })

/** The store over the host's `SqlClient` (PostgreSQL, or PGlite embedded); run `migrate` first. */
export const layerSqlWith = (options: SqlStoreOptions): Layer.Layer<SsoStore, never, SqlClient> =>
  Layer.scoped(SsoStore, makeSqlStore(options))

export const layerSql: Layer.Layer<SsoStore, never, SqlClient> = layerSqlWith({})
