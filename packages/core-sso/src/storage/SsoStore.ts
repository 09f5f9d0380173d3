import { StoreError } from "@civicstack/kit"
import { Context, Schema } from "effect"
import type { Effect, Option } from "effect"
import type {
  AccessToken,
  Application,
  ApplicationPermissions,
  EmailLink,
  Grant,
  RefreshToken,
  SignInSession,
  SigningKey,
  SsoEvent,
  TwoStep,
  User
} from "../domain/records"

export { StoreError }

/** A unique value is taken: an application name, a user's email (compared case-insensitively), a client id. */
export class AlreadyTaken extends Schema.TaggedError<AlreadyTaken>()("AlreadyTaken", {
  field: Schema.Literal("name", "email", "client_id")
}) {}

/**
 * The bearer token of the SSO's push user for one application. Unlike the secrets the SSO hands out, it must be
 * kept readable: the SSO itself presents it.
 */
export interface PushCredential {
  readonly applicationId: string
  readonly tokenId: string
  readonly token: string
  readonly expiresAt: Date
}

/** What a first or second use of a single-use secret finds. */
export interface Use<A> {
  readonly record: A
  /** False when it had been used before: a replay. */
  readonly firstUse: boolean
}

export type UserChanges = Partial<Pick<User, "name" | "email" | "organisationSlug" | "organisationContentId">>

/** An access token with what a resource request needs: its application, its user and their permissions there. */
export interface TokenHolder {
  readonly accessToken: AccessToken
  readonly application: Application
  readonly user: User
  /** The user's permissions on the token's application, sorted; empty when they have none. */
  readonly permissions: ReadonlyArray<string>
}

/** A refresh token with what its exchange checks: its user and their permissions on its application. */
export interface RefreshTokenHolder {
  readonly refreshToken: RefreshToken
  readonly user: User
  /** Sorted; empty when they have none. */
  readonly permissions: ReadonlyArray<string>
}

/**
 * A refresh grant as the store carries it out. The tokens it issues are the refresh token's successors: same
 * application, user, scopes, code and chain (and sign-in time, for the refresh token), created `now`, not revoked.
 */
export interface RefreshExchange {
  readonly tokenHash: string
  /** The authenticated client's application, as the caller knows it. */
  readonly application: Application
  readonly now: Date
  readonly accessToken: { readonly id: string; readonly tokenHash: string; readonly expiresAt: Date }
  readonly refreshToken: { readonly id: string; readonly tokenHash: string }
}

/** What a refresh grant found and did. */
export interface RefreshExchangeOutcome {
  /** The token, its user and their permissions as they were before this exchange. */
  readonly holder: RefreshTokenHolder
  /** True when this exchange used the token and stored its successors. */
  readonly exchanged: boolean
}

/** Which events to list. */
export interface EventFilter {
  readonly userUid?: string
  readonly kind?: string
  readonly since?: Date
  readonly until?: Date
}

/** Which tokens to revoke. */
export type TokenSelection =
  | { readonly grantCodeHash: string }
  | { readonly chainId: string }
  | { readonly userUid: string }
  /** A user's tokens that came from signing in (codes and refreshes), not the API tokens issued in advance. */
  | { readonly chainsOf: string }
  | { readonly accessTokenId: string }

/**
 * The SSO's records. Every method that checks and changes (a code's or refresh token's use, a failed sign-in) does
 * both in one step, so that copies of the service on one database cannot both win.
 */
export class SsoStore extends Context.Tag("@civicstack/core-sso/SsoStore")<SsoStore, {
  /**
   * Runs `effect` while no other caller's `exclusively` runs, in any copy sharing the store, and in one transaction
   * on SQL: first-start setup and bootstrap files are applied once even when copies start together.
   */
  readonly exclusively: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StoreError, R>
  /**
   * Runs `effect` in one transaction on SQL (joining the caller's if there is one), so that a change and the jobs it
   * enqueues are kept or lost together. The memory store's operations are atomic one by one.
   */
  readonly atomically: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StoreError, R>
  /** The token the SSO presents when it pushes to an application, kept so every copy presents the same one. */
  readonly pushCredential: (applicationId: string) => Effect.Effect<Option.Option<PushCredential>, StoreError>
  readonly savePushCredential: (credential: PushCredential) => Effect.Effect<void, StoreError>
  readonly allPushCredentials: Effect.Effect<ReadonlyArray<PushCredential>, StoreError>
  readonly insertApplication: (application: Application) => Effect.Effect<void, StoreError | AlreadyTaken>
  /** Replaces the changeable fields of an application found by id (its name, credentials, settings). */
  readonly updateApplication: (application: Application) => Effect.Effect<void, StoreError | AlreadyTaken>
  readonly applicationById: (id: string) => Effect.Effect<Option.Option<Application>, StoreError>
  readonly applicationByName: (name: string) => Effect.Effect<Option.Option<Application>, StoreError>
  readonly applicationByClientIdHash: (hash: string) => Effect.Effect<Option.Option<Application>, StoreError>
  readonly listApplications: Effect.Effect<ReadonlyArray<Application>, StoreError>

  readonly insertUser: (user: User) => Effect.Effect<void, StoreError | AlreadyTaken>
  readonly userByUid: (uid: string) => Effect.Effect<Option.Option<User>, StoreError>
  /** Case-insensitive. */
  readonly userByEmail: (email: string) => Effect.Effect<Option.Option<User>, StoreError>
  readonly listUsers: Effect.Effect<ReadonlyArray<User>, StoreError>
  readonly updateUser: (uid: string, changes: UserChanges) => Effect.Effect<Option.Option<User>, StoreError | AlreadyTaken>
  readonly setPasswordHash: (uid: string, passwordHash: string | null) => Effect.Effect<void, StoreError>
  /** Suspends (with when and why) or, with `null`, unsuspends. */
  readonly setSuspension: (
    uid: string,
    suspension: { readonly at: Date; readonly reason: string } | null
  ) => Effect.Effect<Option.Option<User>, StoreError>
  /**
   * Counts a wrong password given `at`; the `lockAfter`th in a row locks the account until `lockUntil`. Once a lock
   * has ended the count starts again.
   */
  readonly recordFailedSignIn: (
    uid: string,
    lock: { readonly at: Date; readonly lockAfter: number; readonly lockUntil: Date }
  ) => Effect.Effect<Option.Option<User>, StoreError>
  /** A successful sign-in or an admin's unlock: the count starts again and any lock ends. */
  readonly clearFailedSignIns: (uid: string) => Effect.Effect<Option.Option<User>, StoreError>

  /** The user's two-step verification, confirmed or being set up. */
  readonly twoStepOf: (uid: string) => Effect.Effect<Option.Option<TwoStep>, StoreError>
  /** Starts a set-up with `secret` unless one is confirmed or in progress; answers the one that stands. */
  readonly beginTwoStep: (uid: string, secret: string) => Effect.Effect<TwoStep, StoreError>
  /**
   * Confirms the set-up in progress, `lastStep` being the step of the code that confirmed it (`null` for a secret ops
   * gave), and makes `recoveryCodeHashes` the user's recovery codes; false when no set-up was in progress.
   */
  readonly confirmTwoStep: (
    uid: string,
    confirmation: { readonly at: Date; readonly lastStep: number | null; readonly recoveryCodeHashes: ReadonlyArray<string> }
  ) => Effect.Effect<boolean, StoreError>
  /** Takes `step` as the step of the user's latest code when it comes after the last one taken; false otherwise. */
  readonly useTotpStep: (uid: string, step: number) => Effect.Effect<boolean, StoreError>
  /** Marks one of the user's unused recovery codes used; false when `codeHash` is none of them. */
  readonly useRecoveryCode: (uid: string, codeHash: string, at: Date) => Effect.Effect<boolean, StoreError>
  /** Removes the user's two-step verification and recovery codes; false when they had none. */
  readonly removeTwoStep: (uid: string) => Effect.Effect<boolean, StoreError>
  /** The users whose two-step verification is on (confirmed). */
  readonly usersWithTwoStep: Effect.Effect<ReadonlyArray<string>, StoreError>
  /** Every stored TOTP secret, as stored: for sealing them again under a new key. */
  readonly twoStepSecrets: Effect.Effect<ReadonlyArray<{ readonly userUid: string; readonly secret: string }>, StoreError>
  readonly replaceTwoStepSecret: (uid: string, secret: string) => Effect.Effect<void, StoreError>

  /** Keeps a new emailed link; links that expired more than 30 days ago go. */
  readonly insertEmailLink: (link: EmailLink) => Effect.Effect<void, StoreError>
  readonly emailLinkByHash: (tokenHash: string) => Effect.Effect<Option.Option<EmailLink>, StoreError>
  /** Marks the link used at `at`; false when it had been used or ended before (of two uses, one wins). */
  readonly useEmailLink: (id: string, at: Date) => Effect.Effect<boolean, StoreError>
  /** Ends every unused link of the user: their password was set, so none of them is needed any more. */
  readonly endEmailLinksOf: (uid: string, at: Date) => Effect.Effect<void, StoreError>

  readonly permissionsOf: (uid: string) => Effect.Effect<ReadonlyArray<ApplicationPermissions>, StoreError>
  /** Replaces the user's permissions on one application; an empty list removes them all. */
  readonly setPermissions: (
    uid: string,
    applicationId: string,
    permissions: ReadonlyArray<string>
  ) => Effect.Effect<void, StoreError>

  readonly insertGrant: (grant: Grant) => Effect.Effect<void, StoreError>
  /** Marks a code used; a code used before comes back with `firstUse: false` and is left as it was. */
  readonly useGrant: (codeHash: string, now: Date) => Effect.Effect<Option.Option<Use<Grant>>, StoreError>

  readonly insertAccessToken: (token: AccessToken) => Effect.Effect<void, StoreError>
  readonly accessTokenByHash: (hash: string) => Effect.Effect<Option.Option<AccessToken>, StoreError>
  /**
   * The access token of this hash with its application, user and permissions, in one read: `GET /user.json` and the
   * other resource endpoints call it for every request. The SQL store may answer from memory, kept exact by its
   * database's notifications (see `layerSql`).
   */
  readonly tokenHolder: (tokenHash: string) => Effect.Effect<Option.Option<TokenHolder>, StoreError>
  /**
   * What `tokenHolder` answers, when the store can answer it from memory without waiting; `None` otherwise. For
   * answering hot reads outside the HTTP stack: never stale, never a read.
   */
  readonly tokenHolderInMemory: (tokenHash: string, nowMillis: number) => Option.Option<TokenHolder>
  readonly accessTokenById: (id: string) => Effect.Effect<Option.Option<AccessToken>, StoreError>
  /** The API tokens issued to a user, newest first. */
  readonly apiTokensOf: (uid: string) => Effect.Effect<ReadonlyArray<AccessToken>, StoreError>
  readonly insertRefreshToken: (token: RefreshToken) => Effect.Effect<void, StoreError>
  readonly refreshTokenByHash: (hash: string) => Effect.Effect<Option.Option<RefreshToken>, StoreError>
  /**
   * The refresh grant's read and write in one step: the refresh token of this hash with its user and their
   * permissions on its application, and, when the token is the application's, neither used nor revoked, and
   * `accessProblem(user, application, permissions)` finds nothing, its use with its successors stored. A token refused
   * for its user's access is left as it was. Of simultaneous exchanges of one token, one at most exchanges it.
   */
  readonly exchangeRefreshToken: (
    exchange: RefreshExchange
  ) => Effect.Effect<Option.Option<RefreshExchangeOutcome>, StoreError>
  /** Revokes the selected access and refresh tokens not yet revoked; answers how many. */
  readonly revokeTokens: (selection: TokenSelection, now: Date) => Effect.Effect<number, StoreError>
  /** The applications the user was ever issued a token for. */
  readonly applicationsUsedBy: (uid: string) => Effect.Effect<ReadonlyArray<string>, StoreError>

  /** Records a failure under each key (e.g. `client:<id>`, `ip:<address>`); older records than `forgetBefore` go. */
  readonly recordFailedAttempt: (
    keys: ReadonlyArray<string>,
    at: Date,
    forgetBefore: Date
  ) => Effect.Effect<void, StoreError>
  /**
   * For each of `keys`, in their order, the failures under it after `since` and the oldest of them (when the count
   * will next fall): one read for all the keys a request is throttled by.
   */
  readonly failedAttempts: (
    keys: ReadonlyArray<string>,
    since: Date
  ) => Effect.Effect<ReadonlyArray<{ readonly count: number; readonly oldest: Date | null }>, StoreError>

  readonly insertSession: (session: SignInSession) => Effect.Effect<void, StoreError>
  /** The session, if it was last seen after `idleSince`; it is then seen `now`. */
  readonly touchSession: (
    idHash: string,
    idleSince: Date,
    now: Date
  ) => Effect.Effect<Option.Option<SignInSession>, StoreError>
  readonly deleteSession: (idHash: string) => Effect.Effect<void, StoreError>
  /** Ends the user's sessions, all or all but one. */
  readonly deleteSessionsOf: (uid: string, options?: { readonly except: string }) => Effect.Effect<void, StoreError>

  /** Newest first. */
  readonly signingKeys: Effect.Effect<ReadonlyArray<SigningKey>, StoreError>
  readonly insertSigningKey: (key: SigningKey) => Effect.Effect<void, StoreError>
  /** Retires every key not yet retired except `keepKid`. */
  readonly retireSigningKeys: (keepKid: string, at: Date) => Effect.Effect<void, StoreError>
  /** Replaces the stored private part of a key (sealed again under another encryption key). */
  readonly replacePrivateJwk: (kid: string, privateJwk: SigningKey["privateJwk"]) => Effect.Effect<void, StoreError>

  readonly appendEvent: (event: SsoEvent) => Effect.Effect<void, StoreError>
  /** Newest first: of one user, of one kind, at or after `since` and before `until`, as the filter asks. */
  readonly events: (filter: EventFilter & { readonly limit: number }) => Effect.Effect<ReadonlyArray<SsoEvent>, StoreError>
}>() {}
